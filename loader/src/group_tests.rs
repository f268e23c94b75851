//! Libraries with companions (aclnn's operator packages): each symbol from
//! the first file that exports it, in op-plugin's order, with fake
//! libraries built by `cc` for each test.

use super::libraries::{OPAPI, OPAPI_COMPANIONS, opapi_packages};
use super::*;
use std::collections::HashMap;

/// The functions the test table knows; each fake library returns its own
/// number from the ones it exports.
const NAMES: [&str; 7] = [
    "aclnnShared",
    "aclnnCustom",
    "aclnnVendor",
    "aclnnSplit",
    "aclnnCore",
    "aclnnInfer",
    "aclnnMath",
];

type OpFn = unsafe extern "C" fn() -> i32;

struct Api([Option<OpFn>; NAMES.len()]);

/// Types each symbol as `int (void)`, which every fake library exports.
unsafe fn build(resolve: &mut dyn FnMut(&CStr) -> *mut c_void) -> Api {
    let mut api = Api([None; NAMES.len()]);
    for (slot, name) in api.0.iter_mut().zip(NAMES) {
        let c = std::ffi::CString::new(name).unwrap();
        let p = resolve(&c);
        // SAFETY: the fake libraries define every exported name as
        // `int name(void)`.
        *slot = (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, OpFn>(p) });
    }
    api
}

/// What each function returns: the number of the library it came from.
fn answers(api: &Api) -> HashMap<&'static str, i32> {
    NAMES
        .iter()
        .zip(&api.0)
        // SAFETY: each resolved pointer is an `int (void)` of a loaded
        // library (see `build`).
        .filter_map(|(n, f)| f.map(|f| (*n, unsafe { f() })))
        .collect()
}

/// Builds `dir/file`, a shared library exporting `int f(void) { return n; }`
/// for each function named, with `cc`.
fn fake_lib(dir: &Path, file: &str, n: i32, functions: &[&str]) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join(format!("{file}.c"));
    let body: String = functions
        .iter()
        .map(|f| format!("int {f}(void) {{ return {n}; }}\n"))
        .collect();
    std::fs::write(&src, body).unwrap();
    let out = dir.join(file);
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&out)
        .arg(&src)
        .status()
        .expect("cc runs");
    assert!(status.success(), "cc {}", src.display());
    std::fs::remove_file(&src).unwrap();
    out
}

fn slot() -> Slot<Api> {
    // SAFETY: `build` types the symbols as the fake libraries define them.
    unsafe { Slot::with_companions(&OPAPI, build, |_, _| None, None, Some(&OPAPI_COMPANIONS)) }
}

/// An environment of exactly these variables.
fn env(vars: Vec<(&'static str, PathBuf)>) -> impl Fn(&str) -> Option<OsString> {
    move |name: &str| {
        vars.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.clone().into_os_string())
    }
}

/// A full install: two custom packages (the first entry has none), two
/// vendors in `config.ini` order, a split package, `libopapi.so` and two
/// feature libraries; every later library also exports some functions of
/// the earlier ones, which must not win.
struct Install {
    dir: tempfile::TempDir,
}

impl Install {
    fn new() -> Install {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let lib = "op_api/lib";
        fake_lib(
            &d.join("custom").join(lib),
            "libcust_opapi.so",
            1,
            &["aclnnShared", "aclnnCustom"],
        );
        let vendors = d.join("opp/vendors");
        std::fs::create_dir_all(&vendors).unwrap();
        std::fs::write(
            vendors.join("config.ini"),
            "# vendors\nload_priority= vendor_b ,vendor_a\nload_priority=vendor_a\n",
        )
        .unwrap();
        fake_lib(
            &vendors.join("vendor_a").join(lib),
            "libcust_opapi.so",
            21,
            &["aclnnVendor", "aclnnShared", "aclnnSplit"],
        );
        fake_lib(
            &vendors.join("vendor_b").join(lib),
            "libcust_opapi.so",
            22,
            &["aclnnVendor"],
        );
        let lib64 = d.join("home/lib64");
        fake_lib(&lib64, "libopapi_nn.so", 3, &["aclnnSplit", "aclnnShared"]);
        fake_lib(&lib64, "libopapi.so", 4, &["aclnnCore", "aclnnSplit"]);
        fake_lib(
            &lib64,
            "libaclnn_ops_infer.so",
            5,
            &["aclnnInfer", "aclnnCore"],
        );
        fake_lib(&lib64, "libaclnn_math.so", 6, &["aclnnMath", "aclnnInfer"]);
        Install { dir }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn env(&self) -> impl Fn(&str) -> Option<OsString> {
        let custom = format!(
            "{}:{}",
            self.path("no-package").display(),
            self.path("custom").display()
        );
        env(vec![
            ("ASCEND_CUSTOM_OPP_PATH", PathBuf::from(custom)),
            ("ASCEND_OPP_PATH", self.path("opp")),
            ("ASCEND_HOME_PATH", self.path("home")),
        ])
    }
}

#[test]
fn each_symbol_comes_from_the_first_library_in_op_plugins_order() {
    let install = Install::new();
    let slot = slot();
    let lib = slot.load_slow(&install.env()).unwrap();
    let got = answers(&lib.api);
    let want: HashMap<&str, i32> = [
        ("aclnnShared", 1), // custom package over vendor, split and the rest
        ("aclnnCustom", 1),
        ("aclnnVendor", 22), // vendor_b first in load_priority
        ("aclnnSplit", 21),  // a vendor package over libopapi_*.so and libopapi.so
        ("aclnnCore", 4),    // libopapi.so over the feature libraries
        ("aclnnInfer", 5),   // libaclnn_ops_infer.so before libaclnn_math.so
        ("aclnnMath", 6),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    let p = |rel: &str| install.path(rel).display().to_string();
    assert_eq!(
        lib.source().to_string(),
        format!(
            "7 files, searched per symbol in order: {}; {}; {}; {}; {}; {}; {}",
            p("custom/op_api/lib/libcust_opapi.so"),
            p("opp/vendors/vendor_b/op_api/lib/libcust_opapi.so"),
            p("opp/vendors/vendor_a/op_api/lib/libcust_opapi.so"),
            p("home/lib64/libopapi_nn.so"),
            p("home/lib64/libopapi.so"),
            p("home/lib64/libaclnn_ops_infer.so"),
            p("home/lib64/libaclnn_math.so"),
        )
    );
}

#[test]
fn split_packages_alone_are_enough_without_libopapi() {
    let install = Install::new();
    std::fs::remove_file(install.path("home/lib64/libopapi.so")).unwrap();
    let slot = slot();
    let lib = slot
        .load_slow(&env(vec![("ASCEND_HOME_PATH", install.path("home"))]))
        .unwrap();
    let got = answers(&lib.api);
    assert_eq!(got.get("aclnnSplit"), Some(&3));
    assert_eq!(
        got.get("aclnnCore"),
        Some(&5),
        "from libaclnn_ops_infer.so now"
    );
    assert_eq!(
        got.get("aclnnCustom"),
        None,
        "no custom path in this environment"
    );
}

#[test]
fn cann_opapi_lib_names_the_one_file_and_nothing_else_is_searched() {
    let install = Install::new();
    let only = install.path("home/lib64/libaclnn_math.so");
    let mut vars = vec![("CANN_OPAPI_LIB", only.clone())];
    vars.push(("ASCEND_HOME_PATH", install.path("home")));
    vars.push(("ASCEND_OPP_PATH", install.path("opp")));
    let slot = slot();
    let lib = slot.load_slow(&env(vars)).unwrap();
    assert_eq!(
        lib.source(),
        &Source::EnvVar {
            var: "CANN_OPAPI_LIB",
            path: only
        }
    );
    let got = answers(&lib.api);
    assert_eq!(
        got,
        [("aclnnMath", 6), ("aclnnInfer", 6)].into_iter().collect()
    );
}

#[test]
fn one_library_found_is_reported_as_that_file() {
    let install = Install::new();
    let home = install.path("home/lib64");
    for f in [
        "libopapi_nn.so",
        "libaclnn_ops_infer.so",
        "libaclnn_math.so",
    ] {
        std::fs::remove_file(home.join(f)).unwrap();
    }
    let slot = slot();
    let lib = slot
        .load_slow(&env(vec![("ASCEND_HOME_PATH", install.path("home"))]))
        .unwrap();
    assert_eq!(lib.source(), &Source::SearchPath(home.join("libopapi.so")));
}

#[test]
fn nothing_found_lists_the_library_and_the_feature_libraries_tried() {
    let dir = tempfile::tempdir().unwrap();
    let slot = slot();
    let e = slot
        .load_slow(&env(vec![("ASCEND_HOME_PATH", dir.path().to_path_buf())]))
        .unwrap_err();
    let LoadError::LibraryNotFound {
        library,
        env_var,
        attempts,
    } = &e
    else {
        panic!("{e:?}")
    };
    assert_eq!((*library, *env_var), ("aclnn", "CANN_OPAPI_LIB"));
    let tried: Vec<&str> = attempts.iter().map(|a| a.tried.as_str()).collect();
    let home = dir.path().join("lib64");
    for want in [
        home.join("libopapi.so").display().to_string(),
        "libopapi.so (system loader)".to_string(),
        home.join("libaclnn_ops_train.so").display().to_string(),
        "libaclnn_rand.so (system loader)".to_string(),
    ] {
        assert!(tried.contains(&want.as_str()), "{want} not in {tried:?}");
    }
}

#[test]
fn config_ini_vendors_come_from_the_first_load_priority_line_only() {
    let install = Install::new();
    let got = opapi_packages(&env(vec![("ASCEND_OPP_PATH", install.path("opp"))]));
    assert_eq!(
        got,
        [
            install.path("opp/vendors/vendor_b/op_api/lib/libcust_opapi.so"),
            install.path("opp/vendors/vendor_a/op_api/lib/libcust_opapi.so"),
        ]
    );
}

#[test]
fn root_skips_a_custom_package_another_user_owns() {
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } != 0 {
        eprintln!("skipped: only root can give a file to another user");
        return;
    }
    let install = Install::new();
    let custom = install.path("custom/op_api/lib/libcust_opapi.so");
    std::os::unix::fs::chown(&custom, Some(12345), None).unwrap();
    let got = opapi_packages(&install.env());
    assert!(!got.contains(&custom), "{got:?}");
    assert_eq!(
        got.len(),
        3,
        "the two vendors and the split package: {got:?}"
    );
}
