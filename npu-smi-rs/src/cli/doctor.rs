//! `npu-smi-rs doctor`: where the libraries were found, the driver and CANN
//! versions, device health, and common misconfigurations, each with its fix.
//! Exits 0 when nothing is wrong, 1 otherwise.

use super::Cli;
use crate::Health;
use std::path::{Path, PathBuf};

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Finding {
    /// Information.
    Info(String),
    /// A problem and its fix.
    Problem {
        /// What is wrong.
        what: String,
        /// How to fix it.
        fix: String,
    },
}

fn info(s: impl Into<String>) -> Finding {
    Finding::Info(s.into())
}

fn problem(what: impl Into<String>, fix: impl Into<String>) -> Finding {
    Finding::Problem {
        what: what.into(),
        fix: fix.into(),
    }
}

/// Reads a `version=`/`Version=` line from an install's version file.
fn version_in(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once('=')?;
        (k.trim().eq_ignore_ascii_case("version")).then(|| v.trim().to_string())
    })
}

/// The CANN toolkit roots that exist, with their versions.
fn toolkits(var: &dyn Fn(&str) -> Option<String>) -> Vec<(PathBuf, Option<String>)> {
    let mut roots: Vec<PathBuf> = ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"]
        .iter()
        .filter_map(|v| var(v).map(PathBuf::from))
        .collect();
    roots.push(PathBuf::from("/usr/local/Ascend/ascend-toolkit/latest"));
    roots.dedup();
    roots
        .into_iter()
        .filter(|r| r.is_dir())
        .map(|r| {
            let v = version_in(&r.join("version.cfg"))
                .or_else(|| version_in(&r.join("compiler/version.info")))
                .or_else(|| version_in(&r.join("runtime/version.info")));
            (r, v)
        })
        .collect()
}

/// Checks `ASCEND_RT_VISIBLE_DEVICES` against the devices that exist.
pub fn check_visible_devices(value: Option<&str>, physical_ids: &[u32]) -> Vec<Finding> {
    let Some(v) = value else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut seen = Vec::new();
    for part in v.split(',').map(str::trim) {
        if part.is_empty() {
            out.push(problem(
                format!("ASCEND_RT_VISIBLE_DEVICES={v:?} has an empty entry"),
                "list device ids separated by single commas, e.g. ASCEND_RT_VISIBLE_DEVICES=0,1",
            ));
            continue;
        }
        match part.parse::<u32>() {
            Err(_) => out.push(problem(
                format!("ASCEND_RT_VISIBLE_DEVICES={v:?}: {part:?} is not a device id"),
                "use numeric physical device ids, e.g. ASCEND_RT_VISIBLE_DEVICES=0,1",
            )),
            Ok(id) if !physical_ids.is_empty() && !physical_ids.contains(&id) => out.push(problem(
                format!(
                    "ASCEND_RT_VISIBLE_DEVICES={v:?} names device {id}, which does not exist (devices: {})",
                    physical_ids.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
                ),
                "list only existing device ids (see `npu-smi-rs info`), or unset the variable",
            )),
            Ok(id) if seen.contains(&id) => out.push(problem(
                format!("ASCEND_RT_VISIBLE_DEVICES={v:?} lists device {id} twice"),
                "list each device once",
            )),
            Ok(id) => seen.push(id),
        }
    }
    out
}

/// Checks the environment: install roots, library paths.
pub fn check_environment(
    var: &dyn Fn(&str) -> Option<String>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<Finding> {
    let mut out = Vec::new();
    for name in ["ASCEND_HOME_PATH", "ASCEND_TOOLKIT_HOME"] {
        if let Some(p) = var(name)
            && !exists(Path::new(&p))
        {
            out.push(problem(
                format!("{name}={p} does not exist"),
                "source the set_env.sh of an installed toolkit (e.g. /usr/local/Ascend/ascend-toolkit/set_env.sh) or unset it",
            ));
        }
    }
    if let Some(p) = var("CANN_DCMI_LIB")
        && !exists(Path::new(&p))
    {
        out.push(problem(
            format!("CANN_DCMI_LIB={p} does not exist"),
            "point CANN_DCMI_LIB at libdcmi.so (usually /usr/local/Ascend/driver/lib64/driver/libdcmi.so) or unset it",
        ));
    }
    let driver_dir = "/usr/local/Ascend/driver/lib64/driver";
    if exists(Path::new(driver_dir)) {
        let ld = var("LD_LIBRARY_PATH").unwrap_or_default();
        if !ld.split(':').any(|d| d.trim_end_matches('/') == driver_dir) {
            out.push(problem(
                format!("the driver is installed but {driver_dir} is not on LD_LIBRARY_PATH"),
                format!(
                    "export LD_LIBRARY_PATH={driver_dir}:/usr/local/Ascend/driver/lib64/common:$LD_LIBRARY_PATH (or source set_env.sh)"
                ),
            ));
        }
    }
    out
}

fn gather(cli: &Cli) -> Vec<Finding> {
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let mut out = Vec::new();
    // Libraries, before anything installs the simulator.
    match dcmi_sys::library() {
        Ok(lib) => out.push(info(format!(
            "DCMI: {} (version {})",
            lib.source(),
            lib.version()
        ))),
        Err(e) => out.push(info(format!(
            "DCMI: not found\n    {}",
            e.to_string().replace('\n', "\n    ")
        ))),
    }
    // AscendCL is only searched for, with the loader's search order and no
    // bindings (telemetry does not call it), and is not installed as the
    // process-wide AscendCL: a simulator backend chosen below can still
    // install its table.
    match cann_loader::libraries::ASCENDCL.open(&cann_loader::ProcessEnv) {
        Ok((handle, source)) => {
            let version = source
                .path()
                .and_then(cann_loader::toolkit_version_near)
                .map_or_else(|| "unknown".to_string(), |v| format!("CANN {v}"));
            // Kept loaded, as a -sys crate keeps its library: the runtime is
            // not known to support being unloaded.
            std::mem::forget(handle);
            out.push(info(format!("AscendCL: {source} (version {version})")));
        }
        Err(_) => out.push(info("AscendCL (libascendcl.so): not found")),
    }
    match crate::backend::smi::find_on_path() {
        (Some(p), _) => out.push(info(format!("npu-smi: {}", p.display()))),
        (None, _) => out.push(info("npu-smi: not on PATH")),
    }
    match version_in(Path::new("/usr/local/Ascend/driver/version.info")) {
        Some(v) => out.push(info(format!("driver: {v} (/usr/local/Ascend/driver)"))),
        None => out.push(info(
            "driver: not installed (/usr/local/Ascend/driver/version.info not found)",
        )),
    }
    let tk = toolkits(&var);
    if tk.is_empty() {
        out.push(info("CANN toolkit: not found (ASCEND_HOME_PATH, ASCEND_TOOLKIT_HOME, /usr/local/Ascend/ascend-toolkit/latest)"));
    }
    for (root, v) in tk {
        out.push(info(format!(
            "CANN toolkit: {} (version {})",
            root.display(),
            v.as_deref().unwrap_or("unknown")
        )));
    }
    out.extend(check_environment(&var, &|p| p.exists()));
    // Devices, through the chosen backend.
    match super::connect(cli) {
        Err(e) => out.push(problem(
            format!("no backend: {e}"),
            "install the Ascend driver, or run with --backend sim to use the simulator",
        )),
        Ok(npu) => {
            out.push(info(format!(
                "backend: {} (driver version {})",
                npu.backend_kind(),
                npu.driver_version().unwrap_or_else(|e| e.to_string())
            )));
            match npu.devices() {
                Err(e) => out.push(problem(
                    format!("cannot list devices: {e}"),
                    "check the driver with `npu-smi info`",
                )),
                Ok(devs) => {
                    out.push(info(format!("devices: {}", devs.len())));
                    let mut phys = Vec::new();
                    for d in &devs {
                        phys.push(d.physical_id().or(d.logical_id()).unwrap_or(d.card_id()));
                        match d.health() {
                            Ok(Health::Ok) => {}
                            Ok(h) => out.push(problem(
                                format!("NPU {} chip {} health is {h} (codes {:?})", d.card_id(), d.chip_id(), d.error_codes().unwrap_or_default()),
                                "look the codes up with `npu-smi info -t health -i <card> -c <chip>`; reset or reseat the device",
                            )),
                            Err(e) => out.push(problem(format!("NPU {} chip {} health: {e}", d.card_id(), d.chip_id()), "check the driver")),
                        }
                    }
                    out.extend(check_visible_devices(
                        var("ASCEND_RT_VISIBLE_DEVICES").as_deref(),
                        &phys,
                    ));
                }
            }
        }
    }
    out
}

/// Renders findings, one per line (problems with their fix).
pub fn render(findings: &[Finding]) -> String {
    let mut s = String::new();
    for f in findings {
        match f {
            Finding::Info(t) => s.push_str(&format!("  {t}\n")),
            Finding::Problem { what, fix } => s.push_str(&format!("✗ {what}\n    fix: {fix}\n")),
        }
    }
    let problems = findings
        .iter()
        .filter(|f| matches!(f, Finding::Problem { .. }))
        .count();
    s.push_str(&if problems == 0 {
        "no problems found\n".to_string()
    } else {
        format!("{problems} problem(s) found\n")
    });
    s
}

/// Runs `doctor`; returns the exit code.
pub fn run(cli: &Cli) -> i32 {
    let findings = gather(cli);
    if let Err(e) = super::emit(&render(&findings)) {
        eprintln!("npu-smi-rs: error: {e}");
        return 1;
    }
    i32::from(
        findings
            .iter()
            .any(|f| matches!(f, Finding::Problem { .. })),
    )
}
