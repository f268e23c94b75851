//! `aclmdlRIDebugJsonPrint`: a model run instance's task list as a JSON
//! file, in the release's layout (hicann/runtime
//! `src/runtime/feature/aclgraph/model_aclgraph.cc` `Model::ModelDebugJsonPrint`,
//! `src/runtime/core/src/stream/stream.cc` `Stream::DebugJsonPrintForModelStm`
//! and `TraceEventToJson`): one array of Chrome trace events ("complete"
//! events, `"ph": "X"`), one per task of each of the model's streams, in
//! task order:
//!
//! ```json
//! [
//! {"name":"aclnnAdd","pid":"4242 aclGraph","tid":"stream3","ts":0,"dur":9.5,"ph":"X",
//!  "args":{"Model Id":1,"Stream Id":3,"Task Id":0,"Task Type":"KERNEL_AIVEC"}}
//! ]
//! ```
//!
//! - `name`: the kernel's name for kernels (here the operator's API, such as
//!   `aclnnAdd`), the task type otherwise; `pid` the process id followed by
//!   ` aclGraph`; `tid` `stream<id>`.
//! - `ts`/`dur`: the release's nominal timeline (`stream.hpp`): each task
//!   starts where the last one's nominal span ended — 10 µs per task, 5 for
//!   an event record, 15 for a wait — and lasts 9.5, 4.5 or 14.5 µs.
//! - `args`: the model id, stream id, task id (its index in the stream) and
//!   task type (`TaskInfo::typeName`: `KERNEL_AIVEC`, `MEMCPY_ASYNC`,
//!   `MEMSET_ASYNC`, `EVENT_RECORD`, `EVENT_RESET`, `EVENT_WAIT`,
//!   `LABEL_SET`, `STREAM_LABEL_SWITCH_BY_INDEX`, `MODEL_END_GRAPH`).
//!   Kernel arguments (the `flags` bit `DEBUG_JSON_PRINT_VERBOSE`) are not
//!   written: simulated kernels have no argument block.
//!
//! The file is written only where the path names nothing, or a regular
//! file (replaced): the simulator never opens a FIFO, a device or a
//! directory given as the output path.

use crate::rt::{Error, ErrorKind};
use std::io::Write;
use std::path::Path;

/// One task of the dump: its type and its name.
pub struct Task {
    /// `TaskInfo::typeName`.
    pub kind: &'static str,
    /// The kernel's name, or the type.
    pub name: String,
}

/// Writes the JSON task list of model `model_id` to `path`; `streams` are
/// its streams (id, tasks in order).
///
/// # Errors
///
/// 107000 when `path` names something that is not a regular file, or the
/// file cannot be written (the release: "Failed to open the JSON file
/// path", `RT_ERROR_INVALID_VALUE`).
pub fn write(path: &Path, model_id: u32, streams: &[(i32, Vec<Task>)]) -> Result<(), Error> {
    let invalid = |msg: String| Error::new(ErrorKind::ParamInvalid, msg);
    let shown = path.display();
    match std::fs::metadata(path) {
        Ok(m) if !m.is_file() => {
            return Err(invalid(format!(
                "{shown} exists and is not a regular file (a directory, FIFO, socket or device); \
                 the JSON is written only to a new or regular file"
            )));
        }
        _ => {}
    }
    let pid = std::process::id();
    let mut events = Vec::new();
    for (stream, tasks) in streams {
        let mut ts = 0u32;
        for (i, t) in tasks.iter().enumerate() {
            let (dur, step) = if t.kind == "NOP" {
                (0.5, 1)
            } else if t.kind.contains("RECORD") {
                (4.5, 5)
            } else if t.kind.contains("WAIT") {
                (14.5, 15)
            } else {
                (9.5, 10)
            };
            events.push(serde_json::json!({
                "name": t.name,
                "pid": format!("{pid} aclGraph"),
                "tid": format!("stream{stream}"),
                "ts": ts,
                "dur": dur,
                "ph": "X",
                "args": {
                    "Model Id": model_id,
                    "Stream Id": stream,
                    "Task Id": i,
                    "Task Type": t.kind,
                },
            }));
            ts += step;
        }
    }
    let mut text = String::from("[\n");
    for (i, e) in events.iter().enumerate() {
        text.push_str(&e.to_string());
        if i + 1 < events.len() {
            text.push(',');
        }
        text.push('\n');
    }
    text.push(']');
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    // Not blocking on a FIFO created after the check above.
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut f = options
        .open(path)
        .map_err(|e| invalid(format!("failed to open the JSON file path {shown}: {e}")))?;
    let is_file = f.metadata().map(|m| m.is_file()).unwrap_or(false);
    if !is_file {
        return Err(invalid(format!(
            "{shown} is not a regular file; the JSON is written only to a new or regular file"
        )));
    }
    f.set_len(0)
        .and_then(|()| f.write_all(text.as_bytes()))
        .map_err(|e| invalid(format!("failed to write the JSON file {shown}: {e}")))
}
