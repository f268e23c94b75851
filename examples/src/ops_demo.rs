//! The `ops` example's body: elementwise operators, a matmul, reductions
//! and a softmax on the device (`acl::ops`), operators over views
//! (a transposed operand, a slice as the output) and in place, each checked
//! against the same computation on the host.

use acl::{Result, Stream, Tensor, ops};

/// One operator's outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Check {
    /// What ran, e.g. `"matmul [8,16] @ [16,4]"`.
    pub name: String,
    /// Largest absolute difference from the host result.
    pub max_abs_err: f32,
    /// Whether it is within the tolerance.
    pub ok: bool,
}

impl std::fmt::Display for Check {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{:<40} max |device - host| = {:.2e}  {}",
            self.name,
            self.max_abs_err,
            if self.ok { "ok" } else { "MISMATCH" }
        )
    }
}

fn check(name: &str, got: &[f32], want: &[f32]) -> Check {
    let err = got.iter().zip(want).map(|(g, w)| (g - w).abs()).fold(
        if got.len() == want.len() {
            0.0
        } else {
            f32::INFINITY
        },
        f32::max,
    );
    let scale = want.iter().fold(1.0f32, |m, w| m.max(w.abs()));
    Check {
        name: name.to_string(),
        max_abs_err: err,
        ok: err <= 1e-5 * scale,
    }
}

fn data(n: usize, seed: u32) -> Vec<f32> {
    (0..n as u32)
        .map(|i| (((i.wrapping_mul(2_654_435_761) ^ seed) % 1000) as f32) / 250.0 - 2.0)
        .collect()
}

/// Runs every check on `stream`.
///
/// # Errors
///
/// An [`acl::Error`] from an operator or a copy.
pub fn run(stream: &Stream) -> Result<Vec<Check>> {
    let s = stream;
    let mut out = Vec::new();
    let (m, k, n) = (8usize, 16usize, 4usize);
    let av = data(m * k, 1);
    let bv = data(k * n, 2);
    let rowv = data(k, 3);
    let a = Tensor::from_host(s, &av, &[m, k])?;
    let b = Tensor::from_host(s, &bv, &[k, n])?;
    let row = Tensor::from_host(s, &rowv, &[k])?;

    // Elementwise, with broadcasting of a row over the matrix.
    let mut t = Tensor::zeros(s, &[m, k])?;
    ops::add(s, &a, &row, &mut t)?;
    let want: Vec<f32> = av
        .iter()
        .enumerate()
        .map(|(i, x)| x + rowv[i % k])
        .collect();
    out.push(check(
        "add [8,16] + [16] (broadcast)",
        &t.to_host_vec()?,
        &want,
    ));
    ops::mul(s, &a, &a, &mut t)?;
    let want: Vec<f32> = av.iter().map(|x| x * x).collect();
    out.push(check("mul [8,16] * [8,16]", &t.to_host_vec()?, &want));
    ops::relu(s, &a, &mut t)?;
    let want: Vec<f32> = av.iter().map(|x| x.max(0.0)).collect();
    out.push(check("relu [8,16]", &t.to_host_vec()?, &want));
    ops::exp(s, &a, &mut t)?;
    let want: Vec<f32> = av.iter().map(|x| x.exp()).collect();
    out.push(check("exp [8,16]", &t.to_host_vec()?, &want));

    // Matmul.
    let mut c = Tensor::zeros(s, &[m, n])?;
    ops::matmul(s, &a, &b, &mut c)?;
    let mut want = vec![0.0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|p| av[i * k + p] * bv[p * n + j]).sum();
        }
    }
    out.push(check("matmul [8,16] @ [16,4]", &c.to_host_vec()?, &want));

    // Reductions.
    let mut r = Tensor::zeros(s, &[m])?;
    ops::reduce_sum(s, &a, &[1], false, &mut r)?;
    let want: Vec<f32> = av.chunks(k).map(|row| row.iter().sum()).collect();
    out.push(check(
        "reduce_sum [8,16] over axis 1",
        &r.to_host_vec()?,
        &want,
    ));
    let mut r = Tensor::zeros(s, &[1, k])?;
    ops::reduce_mean(s, &a, &[0], true, &mut r)?;
    let want: Vec<f32> = (0..k)
        .map(|j| (0..m).map(|i| av[i * k + j]).sum::<f32>() / m as f32)
        .collect();
    out.push(check(
        "reduce_mean [8,16] over axis 0, keep",
        &r.to_host_vec()?,
        &want,
    ));

    // Views: aᵀ @ a[:, :4] reads both operands where they lie (strides,
    // no copy), and writes into rows 4..8 of a larger tensor.
    let mut gram = Tensor::zeros(s, &[2 * k, n])?;
    let at = a.view().transpose(0, 1)?;
    let a4 = a.view().narrow(1, 0, n)?;
    ops::matmul(s, &at, &a4, &mut gram.view_mut().narrow(0, k, k)?)?;
    let mut want = vec![0.0f32; 2 * k * n];
    for i in 0..k {
        for j in 0..n {
            want[(k + i) * n + j] = (0..m).map(|p| av[p * k + i] * av[p * k + j]).sum();
        }
    }
    out.push(check(
        "matmul aᵀ @ a[:, :4] into rows 16..32",
        &gram.to_host_vec()?,
        &want,
    ));

    // In place: relu_, then scale column 0 only (a strided view).
    let mut x = Tensor::from_host(s, &av, &[m, k])?;
    ops::relu_(s, &mut x)?;
    ops::muls_(s, &mut x.view_mut().select(1, 0)?, 10.0)?;
    let want: Vec<f32> = av
        .iter()
        .enumerate()
        .map(|(i, v)| v.max(0.0) * if i % k == 0 { 10.0 } else { 1.0 })
        .collect();
    out.push(check(
        "relu_ [8,16], then column 0 *= 10",
        &x.to_host_vec()?,
        &want,
    ));

    // Softmax over the last axis.
    let mut p = Tensor::zeros(s, &[m, n])?;
    ops::softmax(s, &c, -1, &mut p)?;
    let cv = c.to_host_vec()?;
    let want: Vec<f32> = cv
        .chunks(n)
        .flat_map(|row| {
            let mx = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let z: f32 = row.iter().map(|v| (v - mx).exp()).sum();
            row.iter()
                .map(move |v| (v - mx).exp() / z)
                .collect::<Vec<_>>()
        })
        .collect();
    out.push(check(
        "softmax [8,4] over the last axis",
        &p.to_host_vec()?,
        &want,
    ));
    Ok(out)
}
