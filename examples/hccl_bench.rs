//! `hccl_bench`: the equivalent of HCCL's `hccl_test` and NVIDIA's
//! nccl-tests, for every collective.
//!
//! ```text
//! cargo run --release --example hccl_bench -- -b 8K -e 64M -f 2 -d fp32 -o sum -n 4
//! cargo run --release --example hccl_bench -- -c all_gather -n 8
//! torchrun-like launchers: RANK/WORLD_SIZE/MASTER_ADDR/MASTER_PORT set → one rank each
//! ```
//!
//! Options (as `hccl_test`): `-b` minimum size, `-e` maximum size, `-f`
//! multiplication factor (sizes take K, M, G suffixes), `-d` data type
//! (`int8`, `uint8`, `int16`, `uint16`, `int32`, `uint32`, `int64`,
//! `uint64`, `fp16`, `bfp16`, `fp32`, `fp64`), `-o` reduction (`sum`,
//! `prod`, `max`, `min`), `-n` ranks (processes started on this host with
//! `hccl::launch`; without it, the environment a launcher sets decides, else
//! one rank), `-c` collective (`all_reduce`, `broadcast`, `reduce`,
//! `all_gather`, `reduce_scatter`, `all_to_all`, `scatter`, `send_recv`, or
//! `all`), `-w` warm-up iterations, `-i` timed iterations, `-k 0` to skip
//! the result check.
//!
//! Rank 0 prints one line per size: the size in bytes (nccl-tests'
//! convention: the larger of the input and output buffers of one rank),
//! the element count, the type, the op, the average time in µs, the
//! algorithm bandwidth (size / time) and the bus bandwidth (algorithm
//! bandwidth × nccl-tests' factor: 2(n−1)/n for all-reduce, (n−1)/n for
//! all-gather, reduce-scatter, all-to-all and scatter, 1 for broadcast,
//! reduce and send/recv), and the check result (`success`/`failed`).

use acl::{Device, DeviceBuffer, Runtime, Stream};
use hccl::{BootstrapConfig, Comm, CommConfig, DataType, HcclType, ReduceOp};
use std::process::ExitCode;
use std::time::Instant;

#[derive(Debug, Clone)]
struct Args {
    min: usize,
    max: usize,
    factor: usize,
    dtype: DataType,
    op: ReduceOp,
    ranks: Option<u32>,
    colls: Vec<Coll>,
    warmup: usize,
    iters: usize,
    check: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Coll {
    AllReduce,
    Broadcast,
    Reduce,
    AllGather,
    ReduceScatter,
    AllToAll,
    Scatter,
    SendRecv,
}

const ALL: [Coll; 8] = [
    Coll::AllReduce,
    Coll::Broadcast,
    Coll::Reduce,
    Coll::AllGather,
    Coll::ReduceScatter,
    Coll::AllToAll,
    Coll::Scatter,
    Coll::SendRecv,
];

impl Coll {
    fn name(self) -> &'static str {
        match self {
            Coll::AllReduce => "all_reduce",
            Coll::Broadcast => "broadcast",
            Coll::Reduce => "reduce",
            Coll::AllGather => "all_gather",
            Coll::ReduceScatter => "reduce_scatter",
            Coll::AllToAll => "all_to_all",
            Coll::Scatter => "scatter",
            Coll::SendRecv => "send_recv",
        }
    }

    /// nccl-tests' bus bandwidth factor for `n` ranks.
    fn bus_factor(self, n: u32) -> f64 {
        let n = f64::from(n);
        match self {
            Coll::AllReduce => 2.0 * (n - 1.0) / n,
            Coll::AllGather | Coll::ReduceScatter | Coll::AllToAll | Coll::Scatter => (n - 1.0) / n,
            Coll::Broadcast | Coll::Reduce | Coll::SendRecv => 1.0,
        }
    }

    fn reduces(self) -> bool {
        matches!(self, Coll::AllReduce | Coll::Reduce | Coll::ReduceScatter)
    }
}

fn size_arg(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (num, mul) = match s.chars().last() {
        Some('K' | 'k') => (&s[..s.len() - 1], 1 << 10),
        Some('M' | 'm') => (&s[..s.len() - 1], 1 << 20),
        Some('G' | 'g') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let n = num
        .parse::<usize>()
        .map_err(|_| format!("{s:?} is not a size (e.g. 8K, 64M)"))?;
    n.checked_mul(mul)
        .ok_or_else(|| format!("{s:?} is larger than this machine can address"))
}

fn parse(args: &[String]) -> Result<Args, String> {
    let mut a = Args {
        min: 8 << 10,
        max: 64 << 20,
        factor: 2,
        dtype: DataType::Fp32,
        op: ReduceOp::Sum,
        ranks: None,
        colls: vec![Coll::AllReduce],
        warmup: 2,
        iters: 5,
        check: true,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "-b" => a.min = size_arg(&value()?)?,
            "-e" => a.max = size_arg(&value()?)?,
            "-f" => a.factor = value()?.parse().map_err(|_| "-f needs a whole number")?,
            "-d" => {
                let v = value()?;
                a.dtype = DataType::from_name(&v).ok_or(format!("-d {v}: unknown data type"))?;
            }
            "-o" => {
                let v = value()?;
                a.op =
                    ReduceOp::from_name(&v).ok_or(format!("-o {v}: use sum, prod, max or min"))?;
            }
            "-n" | "-p" => {
                let n: u32 = value()?.parse().map_err(|_| "-n needs a number of ranks")?;
                if n == 0 {
                    return Err("-n 0: a benchmark needs at least one rank".into());
                }
                a.ranks = Some(n)
            }
            "-c" => {
                let v = value()?;
                a.colls = if v == "all" {
                    ALL.to_vec()
                } else {
                    vec![
                        *ALL.iter()
                            .find(|c| c.name() == v)
                            .ok_or(format!("-c {v}: unknown collective"))?,
                    ]
                };
            }
            "-w" => a.warmup = value()?.parse().map_err(|_| "-w needs a number")?,
            "-i" | "-r" => a.iters = value()?.parse().map_err(|_| "-i needs a number")?,
            "-k" => a.check = value()? != "0",
            "-h" | "--help" => return Err(HELP.to_string()),
            other => return Err(format!("unknown option {other}\n{HELP}")),
        }
    }
    if a.min == 0 || a.max < a.min || a.factor < 2 || a.iters == 0 {
        return Err("need 0 < -b <= -e, -f >= 2 and -i >= 1".into());
    }
    Ok(a)
}

const HELP: &str = "usage: hccl_bench [-b 8K] [-e 64M] [-f 2] [-d fp32] [-o sum] [-n RANKS] \
                    [-c all_reduce|broadcast|reduce|all_gather|reduce_scatter|all_to_all|scatter|send_recv|all] \
                    [-w 2] [-i 5] [-k 1]";

/// Element values for checks: small integers, exact in every type.
trait Elem: HcclType + Copy + PartialEq {
    fn from_i(v: u32) -> Self;
    fn combine(a: Self, b: Self, op: ReduceOp) -> Self;
}

macro_rules! elem {
    ($($t:ty: $from:expr, $to:expr, $back:expr);*) => {$(
        impl Elem for $t {
            fn from_i(v: u32) -> Self { $from(v) }
            fn combine(a: Self, b: Self, op: ReduceOp) -> Self {
                let (a, b) = ($to(a), $to(b));
                $back(match op {
                    ReduceOp::Sum => a + b,
                    ReduceOp::Prod => a * b,
                    ReduceOp::Max => if a > b { a } else { b },
                    ReduceOp::Min => if a < b { a } else { b },
                })
            }
        }
    )*};
}

elem!(
    i8: |v| v as i8, |x: i8| x as i64, |x: i64| x as i8;
    u8: |v| v as u8, |x: u8| x as i64, |x: i64| x as u8;
    i16: |v| v as i16, |x: i16| x as i64, |x: i64| x as i16;
    u16: |v| v as u16, |x: u16| x as i64, |x: i64| x as u16;
    i32: |v| v as i32, |x: i32| x as i64, |x: i64| x as i32;
    u32: |v| v, |x: u32| x as i64, |x: i64| x as u32;
    i64: |v| v as i64, |x: i64| x, |x: i64| x;
    u64: |v| v as u64, |x: u64| x as i64, |x: i64| x as u64;
    f32: |v| v as f32, |x: f32| x as f64, |x: f64| x as f32;
    f64: |v| v as f64, |x: f64| x, |x: f64| x;
    half::f16: |v| half::f16::from_f32(v as f32), |x: half::f16| x.to_f64(), half::f16::from_f64;
    half::bf16: |v| half::bf16::from_f32(v as f32), |x: half::bf16| x.to_f64(), half::bf16::from_f64
);

/// Rank r's element i: 1 or 2 for products (no overflow), else 1..=4.
fn val(r: u32, i: usize, op: ReduceOp) -> u32 {
    if op == ReduceOp::Prod {
        ((r as usize + i) % 2 + 1) as u32
    } else {
        ((r as usize + i) % 4 + 1) as u32
    }
}

struct Row {
    bytes: usize,
    count: usize,
    micros: f64,
    ok: Option<bool>,
}

type BoxErr = Box<dyn std::error::Error>;

fn bench<T: Elem>(
    comm: &Comm,
    _dev: &Device,
    s: &Stream,
    coll: Coll,
    a: &Args,
    bytes: usize,
) -> Result<Row, BoxErr> {
    let n = comm.size() as usize;
    let r = comm.rank();
    let esz = std::mem::size_of::<T>();
    let op = a.op;
    // `count` elements per rank buffer; `bytes` is the larger buffer.
    let (count, send_len, recv_len) = match coll {
        Coll::AllReduce | Coll::Broadcast | Coll::Reduce | Coll::SendRecv => {
            let c = (bytes / esz).max(1);
            (c, c, c)
        }
        Coll::AllGather => {
            let c = (bytes / esz / n).max(1);
            (c, c, c * n)
        }
        Coll::ReduceScatter | Coll::Scatter => {
            let c = (bytes / esz / n).max(1);
            (c, c * n, c)
        }
        Coll::AllToAll => {
            let c = (bytes / esz / n).max(1);
            (c, c * n, c * n)
        }
    };
    let host: Vec<T> = (0..send_len).map(|i| T::from_i(val(r, i, op))).collect();
    let send: DeviceBuffer<T> = s.clone_from_host(&host)?;
    let mut recv: DeviceBuffer<T> = s.alloc_zeros(recv_len)?;
    let (next, prev) = ((r + 1) % n as u32, (r + n as u32 - 1) % n as u32);
    let run = |recv: &mut DeviceBuffer<T>| -> hccl::Result<()> {
        match coll {
            Coll::AllReduce => comm.all_reduce(&send, recv, op, s),
            Coll::Broadcast => {
                if r == 0 {
                    s.copy_dtod(&send, recv)?;
                }
                comm.broadcast(recv, 0, s)
            }
            Coll::Reduce => {
                if r == 0 {
                    comm.reduce(&send, Some(recv), op, 0, s)
                } else {
                    comm.reduce::<T, DeviceBuffer<T>>(&send, None, op, 0, s)
                }
            }
            Coll::AllGather => comm.all_gather(&send, recv, s),
            Coll::ReduceScatter => comm.reduce_scatter(&send, recv, op, s),
            Coll::AllToAll => comm.all_to_all(&send, recv, s),
            Coll::Scatter => {
                if r == 0 {
                    comm.scatter(Some(&send), recv, 0, s)
                } else {
                    comm.scatter::<T, DeviceBuffer<T>>(None, recv, 0, s)
                }
            }
            Coll::SendRecv => {
                if n == 1 {
                    return Ok(s.copy_dtod(&send, recv)?);
                }
                hccl::group(|| {
                    comm.send(&send, next, s)?;
                    comm.recv(recv, prev, s)
                })
            }
        }
    };
    for _ in 0..a.warmup {
        run(&mut recv)?;
    }
    s.synchronize()?;
    comm.barrier(s)?;
    s.synchronize()?;
    let t = Instant::now();
    for _ in 0..a.iters {
        run(&mut recv)?;
    }
    s.synchronize()?;
    let micros = t.elapsed().as_secs_f64() * 1e6 / a.iters as f64;
    let ok = if a.check {
        let got = recv.to_host_vec()?;
        let reduced = |i: usize| {
            (1..n as u32).fold(T::from_i(val(0, i, op)), |acc, q| {
                T::combine(acc, T::from_i(val(q, i, op)), op)
            })
        };
        let want: Option<Vec<T>> = match coll {
            Coll::AllReduce => Some((0..count).map(reduced).collect()),
            Coll::Reduce => (r == 0).then(|| (0..count).map(reduced).collect()),
            Coll::Broadcast => Some((0..count).map(|i| T::from_i(val(0, i, op))).collect()),
            Coll::AllGather => Some(
                (0..recv_len)
                    .map(|j| T::from_i(val((j / count) as u32, j % count, op)))
                    .collect(),
            ),
            Coll::ReduceScatter => Some(
                (0..count)
                    .map(|i| reduced(r as usize * count + i))
                    .collect(),
            ),
            Coll::Scatter => Some(
                (0..count)
                    .map(|i| T::from_i(val(0, r as usize * count + i, op)))
                    .collect(),
            ),
            Coll::AllToAll => Some(
                (0..recv_len)
                    .map(|j| T::from_i(val((j / count) as u32, r as usize * count + j % count, op)))
                    .collect(),
            ),
            Coll::SendRecv => Some(
                (0..count)
                    .map(|i| T::from_i(val(if n == 1 { r } else { prev }, i, op)))
                    .collect(),
            ),
        };
        want.map(|w| w == got)
    } else {
        None
    };
    Ok(Row {
        bytes: send_len.max(recv_len) * esz,
        count,
        micros,
        ok,
    })
}

/// Every rank's check result, gathered to all (an all-reduce of flags).
fn all_ok(comm: &Comm, s: &Stream, ok: Option<bool>) -> Result<Option<bool>, BoxErr> {
    let mut flag = s.clone_from_host(&[i32::from(ok == Some(false)), i32::from(ok.is_some())])?;
    comm.all_reduce_in_place(&mut flag, ReduceOp::Max, s)?;
    let v = flag.to_host_vec()?;
    Ok((v[1] > 0).then_some(v[0] == 0))
}

fn rank_main(a: &Args) -> Result<bool, BoxErr> {
    let backend = examples::select_backend()?;
    let rt = Runtime::init()?;
    let cfg = if std::env::var_os("RANK").is_some() || std::env::var_os("SLURM_PROCID").is_some() {
        BootstrapConfig::from_env()?
    } else {
        let mut c = BootstrapConfig::new(0, 1);
        c.master_port = hccl::launch::free_port("127.0.0.1")?;
        c
    };
    let dev = Device::new(&rt, cfg.local_rank % rt.device_count()?.max(1))?;
    let t = Instant::now();
    let comm = hccl::init_comm(&dev, &cfg, &CommConfig::default())?;
    let ready = t.elapsed();
    let s = dev.new_stream()?;
    let lead = comm.rank() == 0;
    if lead {
        println!(
            "# hccl_bench on {backend}: {} ranks, communicator ready in {ready:.2?}",
            comm.size()
        );
    }
    if matches!(backend, examples::Backend::Sim) {
        // The reference for the simulator's bandwidth, measured by rank 0
        // while every other rank waits in a barrier (idle, not competing
        // for the cores).
        comm.barrier(&s)?;
        s.synchronize()?;
        if lead {
            println!(
                "# single-core memcpy on this host: {:.2} GB/s",
                memcpy_gbps(a.max.min(64 << 20))
            );
        }
        comm.barrier(&s)?;
        s.synchronize()?;
    }
    let mut all_passed = true;
    for &coll in &a.colls {
        if lead {
            println!("# {}", coll.name());
            println!(
                "{:>14} {:>12} {:>6} {:>6} {:>14} {:>20} {:>20} {:>12}",
                "data_size(B)",
                "count",
                "type",
                "redop",
                "aveg_time(us)",
                "alg_bandwidth(GB/s)",
                "bus_bandwidth(GB/s)",
                "check_result"
            );
        }
        let mut bytes = a.min;
        while bytes <= a.max {
            let row = match a.dtype {
                DataType::Int8 => bench::<i8>(&comm, &dev, &s, coll, a, bytes),
                DataType::Uint8 => bench::<u8>(&comm, &dev, &s, coll, a, bytes),
                DataType::Int16 => bench::<i16>(&comm, &dev, &s, coll, a, bytes),
                DataType::Uint16 => bench::<u16>(&comm, &dev, &s, coll, a, bytes),
                DataType::Int32 => bench::<i32>(&comm, &dev, &s, coll, a, bytes),
                DataType::Uint32 => bench::<u32>(&comm, &dev, &s, coll, a, bytes),
                DataType::Int64 => bench::<i64>(&comm, &dev, &s, coll, a, bytes),
                DataType::Uint64 => bench::<u64>(&comm, &dev, &s, coll, a, bytes),
                DataType::Fp16 => bench::<half::f16>(&comm, &dev, &s, coll, a, bytes),
                DataType::Bf16 => bench::<half::bf16>(&comm, &dev, &s, coll, a, bytes),
                DataType::Fp32 => bench::<f32>(&comm, &dev, &s, coll, a, bytes),
                DataType::Fp64 => bench::<f64>(&comm, &dev, &s, coll, a, bytes),
                _ => return Err(format!("data type {} is not benchmarked", a.dtype).into()),
            };
            let row = match row {
                Ok(r) => r,
                // A reduction the SoC does not offer for this type or
                // operation (as hccl_test prints and goes on); any other
                // failure (a dead or stopped peer, a fault) ends the run
                // with a non-zero exit.
                Err(e) if coll.reduces() && is_not_supported(&*e) => {
                    if lead {
                        println!("# {}: {e}", coll.name());
                    }
                    break;
                }
                Err(e) => return Err(e),
            };
            let ok = all_ok(&comm, &s, row.ok)?;
            all_passed &= ok != Some(false);
            if lead {
                let alg = row.bytes as f64 / (row.micros * 1e3);
                let bus = alg * coll.bus_factor(comm.size());
                let check = match ok {
                    Some(true) => "success",
                    Some(false) => "failed",
                    None => "NULL",
                };
                let redop = if coll.reduces() { a.op.name() } else { "-" };
                println!(
                    "{:>14} {:>12} {:>6} {:>6} {:>14.2} {:>20.5} {:>20.5} {:>12}",
                    row.bytes, row.count, a.dtype, redop, row.micros, alg, bus, check
                );
            }
            match bytes.checked_mul(a.factor) {
                Some(next) => bytes = next,
                None => break,
            }
        }
    }
    Ok(all_passed)
}

/// Whether `e` is HCCL's "not supported" (a reduction the SoC lacks).
fn is_not_supported(e: &(dyn std::error::Error + 'static)) -> bool {
    e.downcast_ref::<hccl::Error>()
        .and_then(hccl::Error::code)
        .is_some_and(|c| c == hccl::ErrorCode::NotSupport)
}

/// Single-core memcpy bandwidth of `bytes`-sized copies, GB/s (best of 10).
fn memcpy_gbps(bytes: usize) -> f64 {
    let src = vec![1u8; bytes];
    let mut dst = vec![0u8; bytes];
    let mut best = f64::MAX;
    for _ in 0..10 {
        let t = Instant::now();
        dst.copy_from_slice(std::hint::black_box(&src));
        std::hint::black_box(&mut dst);
        best = best.min(t.elapsed().as_secs_f64());
    }
    bytes as f64 / best / 1e9
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a = match parse(&args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let launched = std::env::var_os("RANK").is_some() || std::env::var_os("SLURM_PROCID").is_some();
    if let (Some(n), false) = (a.ranks, launched) {
        // Start the ranks as processes of this program, like torchrun.
        let exe = match std::env::current_exe() {
            Ok(e) => e,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::FAILURE;
            }
        };
        let rest: Vec<&String> = {
            let mut v = Vec::new();
            let mut skip = false;
            for x in &args {
                if skip {
                    skip = false;
                } else if x == "-n" || x == "-p" {
                    skip = true;
                } else {
                    v.push(x);
                }
            }
            v
        };
        let exits = hccl::launch::Launcher::new(exe)
            .nproc(n)
            .args(rest)
            .grace_after_failure(Some(std::time::Duration::from_secs(10)))
            .run();
        return match exits {
            Ok(exits) if exits.iter().all(|e| e.success()) => ExitCode::SUCCESS,
            Ok(exits) => {
                for e in exits.iter().filter(|e| !e.success()) {
                    eprintln!("{e}");
                }
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("error: cannot start the ranks: {e}");
                ExitCode::FAILURE
            }
        };
    }
    match rank_main(&a) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: a result check failed");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
