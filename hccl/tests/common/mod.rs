//! Shared by the hccl tests: ranks as threads, and the collective × type ×
//! op matrix every configuration runs (in-process and multi-process).

#![allow(dead_code, reason = "each test binary uses a different subset")]

use acl::{Device, DeviceBuffer, Runtime, Stream};
use hccl::{Comm, CommConfig, ErrorCode, HcclType, P2pOp, ReduceOp, RootInfo};
use std::fmt::Debug;
use std::sync::OnceLock;

pub fn runtime() -> Runtime {
    static RT: OnceLock<Runtime> = OnceLock::new();
    RT.get_or_init(|| {
        cann_sim::install().unwrap();
        Runtime::init().unwrap()
    })
    .clone()
}

/// Serialises the tests of a binary that use devices: ranks of two tests
/// sharing a device's default stream would order each other's collectives
/// (as they would on an NPU).
pub fn serial() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Runs `body(comm, device, stream)` for `n` ranks on threads (rank r on
/// device r % 8); returns each rank's result, in rank order.
pub fn threads<T: Send + 'static>(
    n: u32,
    config: CommConfig,
    body: impl Fn(&Comm, &Device, &Stream) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let rt = runtime();
    let root = RootInfo::for_device(&Device::new(&rt, 0).unwrap()).unwrap();
    let body = std::sync::Arc::new(body);
    let hs: Vec<_> = (0..n)
        .map(|r| {
            let (rt, root, body, config) = (rt.clone(), root.clone(), body.clone(), config.clone());
            std::thread::spawn(move || {
                let dev = Device::new(&rt, r % 8).unwrap();
                let comm = Comm::init_root_info(&dev, &root, n, r, &config).unwrap();
                let stream = dev.new_stream().unwrap();
                body(&comm, &dev, &stream)
            })
        })
        .collect();
    hs.into_iter().map(|h| h.join().unwrap()).collect()
}

/// An element type of the matrix: built from small integers, reduced with
/// the hardware's semantics (integers wrap; halves round through f32).
pub trait Elem: HcclType + Copy + PartialEq + Debug + Send + Sync {
    fn from_i(v: i64) -> Self;
    fn combine(a: Self, b: Self, op: ReduceOp) -> Self;
}

macro_rules! int_elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            fn from_i(v: i64) -> Self { v as $t }
            fn combine(a: Self, b: Self, op: ReduceOp) -> Self {
                match op {
                    ReduceOp::Sum => a.wrapping_add(b),
                    ReduceOp::Prod => a.wrapping_mul(b),
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                }
            }
        }
    )*};
}
int_elem!(i8, u8, i16, u16, i32, u32, i64, u64);

macro_rules! float_elem {
    ($($t:ty => $from:expr, $to:expr, $back:expr);*) => {$(
        impl Elem for $t {
            fn from_i(v: i64) -> Self { $from(v) }
            fn combine(a: Self, b: Self, op: ReduceOp) -> Self {
                let (a, b) = ($to(a), $to(b));
                $back(match op {
                    ReduceOp::Sum => a + b,
                    ReduceOp::Prod => a * b,
                    ReduceOp::Max => a.max(b),
                    ReduceOp::Min => a.min(b),
                })
            }
        }
    )*};
}
float_elem!(
    f32 => |v| v as f32, |x: f32| x, |x| x;
    f64 => |v| v as f64, |x: f64| x, |x| x;
    half::f16 => |v| half::f16::from_f32(v as f32), |x: half::f16| x.to_f32(), half::f16::from_f32;
    half::bf16 => |v| half::bf16::from_f32(v as f32), |x: half::bf16| x.to_f32(), half::bf16::from_f32
);

/// Whether the default SoC (Atlas A2) reduces `T` with `op`.
pub fn reducible<T: HcclType>(op: ReduceOp) -> bool {
    use hccl::DataType::*;
    match T::DATA_TYPE {
        Int8 | Int32 | Int64 | Fp16 | Fp32 => true,
        Int16 | Bf16 => op != ReduceOp::Prod,
        _ => false,
    }
}

/// Rank r's element i for `op` (products stay small: 1s and 2s).
fn val(r: u32, i: usize, op: ReduceOp) -> i64 {
    if op == ReduceOp::Prod {
        ((r as usize + i) % 2 + 1) as i64
    } else {
        ((r as usize * 3 + i) % 4 + 1) as i64
    }
}

fn data<T: Elem>(r: u32, len: usize, op: ReduceOp, salt: usize) -> Vec<T> {
    (0..len).map(|i| T::from_i(val(r, i + salt, op))).collect()
}

fn reduced<T: Elem>(n: u32, len: usize, op: ReduceOp, salt: usize) -> Vec<T> {
    (0..len)
        .map(|i| {
            (1..n).fold(T::from_i(val(0, i + salt, op)), |acc, r| {
                T::combine(acc, T::from_i(val(r, i + salt, op)), op)
            })
        })
        .collect()
}

fn expect_eq<T: Debug + PartialEq>(what: &str, got: Vec<T>, want: Vec<T>) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!(
            "{what}: got {} elements, want {}",
            got.len(),
            want.len()
        ));
    }
    if let Some(i) = got.iter().zip(&want).position(|(a, b)| a != b) {
        let end = (i + 4).min(got.len());
        return Err(format!(
            "{what}: element {i} of {} differs: got {:?}, want {:?}",
            got.len(),
            &got[i..end],
            &want[i..end]
        ));
    }
    Ok(())
}

fn not_supported(what: &str, r: hccl::Result<()>, function: &str) -> Result<(), String> {
    match r {
        Err(hccl::Error::Hccl {
            code: ErrorCode::NotSupport,
            function: f,
            ..
        }) if f == function => Ok(()),
        other => Err(format!(
            "{what}: expected {function} to fail with HCCL_E_NOT_SUPPORT, got {other:?}"
        )),
    }
}

macro_rules! tr {
    ($what:expr, $e:expr) => {
        $e.map_err(|e| format!("{}: {e}", $what))?
    };
}

/// Every collective for element type `T` (and every op for the reducing
/// ones); returns the number of checks.
pub fn matrix_for<T: Elem>(comm: &Comm, dev: &Device, s: &Stream) -> Result<usize, String> {
    matrix_sized::<T>(comm, dev, s, 5)
}

/// [`matrix_for`] with `count` elements per rank block.
pub fn matrix_sized<T: Elem>(
    comm: &Comm,
    dev: &Device,
    s: &Stream,
    count: usize,
) -> Result<usize, String> {
    let n = comm.size();
    let r = comm.rank();
    let nu = n as usize;
    let ty = T::DATA_TYPE;
    // Buffers homed on the rank's own stream, except every third one on the
    // device's default stream (exercising the cross-stream ordering).
    let flip = std::cell::Cell::new(0u32);
    let home = || {
        flip.set(flip.get() + 1);
        if flip.get().is_multiple_of(3) {
            dev.default_stream()
        } else {
            s.clone()
        }
    };
    let up = |v: &[T]| home().clone_from_host(v).map_err(|e| e.to_string());
    let zeros = |len: usize| home().alloc_zeros::<T>(len).map_err(|e| e.to_string());
    let mut checks = 0;
    for op in ReduceOp::ALL {
        let what = format!("all_reduce {ty} {op} on {n} ranks");
        let send = up(&data::<T>(r, count, op, 0))?;
        let mut recv = zeros(count)?;
        let res = comm.all_reduce(&send, &mut recv, op, s);
        if !reducible::<T>(op) {
            not_supported(&what, res, "HcclAllReduce")?;
            let mut out = zeros(count * nu)?;
            not_supported(
                &what,
                comm.reduce_scatter(
                    &up(&data::<T>(r, count * nu, op, 0))?,
                    &mut out.slice_mut(..count).unwrap(),
                    op,
                    s,
                ),
                "HcclReduceScatter",
            )?;
            checks += 2;
            continue;
        }
        tr!(what, res);
        tr!(what, s.synchronize());
        expect_eq(
            &what,
            tr!(what, recv.to_host_vec()),
            reduced::<T>(n, count, op, 0),
        )?;

        let what = format!("all_reduce_in_place {ty} {op}");
        let mut buf = up(&data::<T>(r, count, op, 1))?;
        tr!(what, comm.all_reduce_in_place(&mut buf, op, s));
        expect_eq(
            &what,
            tr!(what, buf.to_host_vec()),
            reduced::<T>(n, count, op, 1),
        )?;

        let what = format!("reduce {ty} {op} to root {}", n - 1);
        let send = up(&data::<T>(r, count, op, 2))?;
        let mut out = zeros(count)?;
        let root = n - 1;
        if r == root {
            tr!(what, comm.reduce(&send, Some(&mut out), op, root, s));
            expect_eq(
                &what,
                tr!(what, out.to_host_vec()),
                reduced::<T>(n, count, op, 2),
            )?;
        } else {
            tr!(
                what,
                comm.reduce::<T, DeviceBuffer<T>>(&send, None, op, root, s)
            );
            tr!(what, s.synchronize());
        }

        let what = format!("reduce_scatter {ty} {op}");
        let send = up(&data::<T>(r, count * nu, op, 3))?;
        let mut out = zeros(count)?;
        tr!(what, comm.reduce_scatter(&send, &mut out, op, s));
        let all = reduced::<T>(n, count * nu, op, 3);
        expect_eq(
            &what,
            tr!(what, out.to_host_vec()),
            all[r as usize * count..][..count].to_vec(),
        )?;

        let what = format!("reduce_scatter_v {ty} {op}");
        let counts: Vec<u64> = (0..n).map(|i| u64::from(i % 3 + 1)).collect();
        let displs: Vec<u64> = counts
            .iter()
            .scan(0, |a, &c| {
                let d = *a;
                *a += c + 1;
                Some(d)
            })
            .collect();
        let total = (displs[nu - 1] + counts[nu - 1]) as usize;
        let send = up(&data::<T>(r, total, op, 4))?;
        let mut out = zeros(counts[r as usize] as usize)?;
        tr!(
            what,
            comm.reduce_scatter_v(&send, &counts, &displs, &mut out, op, s)
        );
        let all = reduced::<T>(n, total, op, 4);
        let d = displs[r as usize] as usize;
        expect_eq(
            &what,
            tr!(what, out.to_host_vec()),
            all[d..d + counts[r as usize] as usize].to_vec(),
        )?;
        checks += 5;
    }
    let op = ReduceOp::Sum;

    let what = format!("broadcast {ty} from {}", n / 2);
    let mut buf = if r == n / 2 {
        up(&data::<T>(r, count, op, 5))?
    } else {
        zeros(count)?
    };
    tr!(what, comm.broadcast(&mut buf, n / 2, s));
    expect_eq(
        &what,
        tr!(what, buf.to_host_vec()),
        data::<T>(n / 2, count, op, 5),
    )?;

    let what = format!("all_gather {ty}");
    let send = up(&data::<T>(r, count, op, 6))?;
    let mut out = zeros(count * nu)?;
    tr!(what, comm.all_gather(&send, &mut out, s));
    let want: Vec<T> = (0..n).flat_map(|i| data::<T>(i, count, op, 6)).collect();
    expect_eq(&what, tr!(what, out.to_host_vec()), want)?;

    let what = format!("all_gather_v {ty}");
    let counts: Vec<u64> = (0..n).map(|i| u64::from(i + 1)).collect();
    let displs: Vec<u64> = counts
        .iter()
        .scan(0, |a, &c| {
            let d = *a;
            *a += c + 1;
            Some(d)
        })
        .collect();
    let total = (displs[nu - 1] + counts[nu - 1]) as usize;
    let send = up(&data::<T>(r, counts[r as usize] as usize, op, 7))?;
    let mut out = zeros(total)?;
    tr!(
        what,
        comm.all_gather_v(&send, &mut out, &counts, &displs, s)
    );
    let mut want = vec![T::from_i(0); total];
    for i in 0..nu {
        let d = displs[i] as usize;
        want[d..d + counts[i] as usize].copy_from_slice(&data::<T>(
            i as u32,
            counts[i] as usize,
            op,
            7,
        ));
    }
    expect_eq(&what, tr!(what, out.to_host_vec()), want)?;

    let what = format!("scatter {ty} from 0");
    let mut out = zeros(count)?;
    if r == 0 {
        let send = up(&data::<T>(9, count * nu, op, 8))?;
        tr!(what, comm.scatter(Some(&send), &mut out, 0, s));
    } else {
        tr!(
            what,
            comm.scatter::<T, DeviceBuffer<T>>(None, &mut out, 0, s)
        );
    }
    expect_eq(
        &what,
        tr!(what, out.to_host_vec()),
        data::<T>(9, count * nu, op, 8)[r as usize * count..][..count].to_vec(),
    )?;

    let what = format!("all_to_all {ty}");
    let block = 2usize;
    let mine: Vec<T> = (0..block * nu)
        .map(|i| T::from_i((r as i64 * 7 + i as i64) % 50))
        .collect();
    let send = up(&mine)?;
    let mut out = zeros(block * nu)?;
    tr!(what, comm.all_to_all(&send, &mut out, s));
    let want: Vec<T> = (0..nu)
        .flat_map(|i| {
            (0..block)
                .map(move |k| T::from_i((i as i64 * 7 + (r as usize * block + k) as i64) % 50))
        })
        .collect();
    expect_eq(&what, tr!(what, out.to_host_vec()), want)?;

    // all_to_all_v: rank a sends f(a, b) elements to rank b.
    let what = format!("all_to_all_v {ty}");
    let f = |a: u32, b: u32| u64::from((a + 2 * b) % 3);
    let sc: Vec<u64> = (0..n).map(|j| f(r, j)).collect();
    let sd: Vec<u64> = sc
        .iter()
        .scan(0, |a, &c| {
            let d = *a;
            *a += c;
            Some(d)
        })
        .collect();
    let rc: Vec<u64> = (0..n).map(|i| f(i, r)).collect();
    let rd: Vec<u64> = rc
        .iter()
        .scan(0, |a, &c| {
            let d = *a;
            *a += c + 1;
            Some(d)
        })
        .collect();
    let send_len = sc.iter().sum::<u64>() as usize;
    let recv_len = (rd[nu - 1] + rc[nu - 1]) as usize;
    let elem = |a: u32, b: u32, k: u64| T::from_i(i64::from(a * 10 + b) + k as i64);
    let sendv: Vec<T> = (0..n)
        .flat_map(|j| (0..f(r, j)).map(move |k| elem(r, j, k)))
        .collect();
    let send = up(&sendv)?;
    let mut out = zeros(recv_len.max(1))?;
    tr!(
        what,
        comm.all_to_all_v(
            &send.slice(..send_len).unwrap(),
            &sc,
            &sd,
            &mut out,
            &rc,
            &rd,
            s
        )
    );
    let mut want = vec![T::from_i(0); recv_len.max(1)];
    for i in 0..n {
        for k in 0..rc[i as usize] {
            want[(rd[i as usize] + k) as usize] = elem(i, r, k);
        }
    }
    expect_eq(&what, tr!(what, out.to_host_vec()), want)?;

    let what = format!("all_to_all_vc {ty}");
    let m: Vec<u64> = (0..n).flat_map(|i| (0..n).map(move |j| f(i, j))).collect();
    let mut out = zeros(rc.iter().sum::<u64>().max(1) as usize)?;
    tr!(
        what,
        comm.all_to_all_vc(&send.slice(..send_len).unwrap(), &m, &mut out, s)
    );
    let want: Vec<T> = {
        let mut w: Vec<T> = (0..n)
            .flat_map(|i| (0..f(i, r)).map(move |k| elem(i, r, k)))
            .collect();
        if w.is_empty() {
            w.push(T::from_i(0));
        }
        w
    };
    expect_eq(&what, tr!(what, out.to_host_vec()), want)?;
    checks += 7;

    if n > 1 {
        let what = format!("send/recv ring in a group {ty}");
        let (next, prev) = ((r + 1) % n, (r + n - 1) % n);
        let send = up(&data::<T>(r, count, op, 10))?;
        let mut out = zeros(count)?;
        tr!(
            what,
            hccl::group(|| {
                comm.send(&send, next, s)?;
                comm.recv(&mut out, prev, s)
            })
        );
        expect_eq(
            &what,
            tr!(what, out.to_host_vec()),
            data::<T>(prev, count, op, 10),
        )?;

        let what = format!("batch_send_recv ring {ty}");
        let mut out = zeros(count)?;
        {
            let mut ops = [P2pOp::recv(&mut out, prev), P2pOp::send(&send, next)];
            tr!(what, comm.batch_send_recv(&mut ops, s));
        }
        expect_eq(
            &what,
            tr!(what, out.to_host_vec()),
            data::<T>(prev, count, op, 10),
        )?;
        checks += 2;
    }
    tr!("barrier", comm.barrier(s));
    tr!("barrier", s.synchronize());
    Ok(checks + 1)
}

/// The matrix with buffers of megabytes (device memory the simulator maps
/// on its own, which other rank processes read through shared mappings),
/// for one integer and one float type.
pub fn large(comm: &Comm, dev: &Device, s: &Stream) -> Result<usize, String> {
    Ok(matrix_sized::<i32>(comm, dev, s, (1 << 20) + 3)?
        + matrix_sized::<f32>(comm, dev, s, (1 << 19) + 5)?)
}

/// The whole matrix: every type.
pub fn matrix(comm: &Comm, dev: &Device, s: &Stream) -> Result<usize, String> {
    Ok(matrix_for::<i8>(comm, dev, s)?
        + matrix_for::<u8>(comm, dev, s)?
        + matrix_for::<i16>(comm, dev, s)?
        + matrix_for::<u16>(comm, dev, s)?
        + matrix_for::<i32>(comm, dev, s)?
        + matrix_for::<u32>(comm, dev, s)?
        + matrix_for::<i64>(comm, dev, s)?
        + matrix_for::<u64>(comm, dev, s)?
        + matrix_for::<half::f16>(comm, dev, s)?
        + matrix_for::<half::bf16>(comm, dev, s)?
        + matrix_for::<f32>(comm, dev, s)?
        + matrix_for::<f64>(comm, dev, s)?)
}

/// An all-reduce whose f32 sum depends on the order of the additions
/// (1e8 + 1 loses the 1): every path must add in the ring's order — for
/// block c, rank c+1's input first, then c+2, …, and rank c's own last —
/// so that the bits do not depend on the transport.
pub fn ring_order_sum(comm: &Comm, _dev: &Device, s: &Stream) -> Result<(), String> {
    let n = comm.size() as usize;
    let count = 4 * n;
    let vals = [1.0f32, 1e8, -1e8, 3.0];
    let x = |r: usize, i: usize| vals[(r + i) % vals.len()];
    let mine: Vec<f32> = (0..count).map(|i| x(comm.rank() as usize, i)).collect();
    let mut buf = s.clone_from_host(&mine).map_err(|e| e.to_string())?;
    comm.all_reduce_in_place(&mut buf, ReduceOp::Sum, s)
        .map_err(|e| e.to_string())?;
    let got = buf.to_host_vec().map_err(|e| e.to_string())?;
    let want: Vec<f32> = (0..count)
        .map(|i| {
            // Block of element i under the even split of `count` over n.
            let c = (0..n).find(|&c| i < (c + 1) * count / n).unwrap_or(n - 1);
            let mut acc = x((c + 1) % n, i);
            for k in 2..n {
                acc += x((c + k) % n, i);
            }
            acc + x(c, i)
        })
        .collect();
    if got
        .iter()
        .map(|v| v.to_bits())
        .ne(want.iter().map(|v| v.to_bits()))
    {
        return Err(format!("ring-order sum: got {got:?}, want {want:?}"));
    }
    Ok(())
}
