//! Peak resident memory of the running process (Linux only), shared by the benchmarks
//! (included with `#[path]`; a folder without `main.rs` is not a benchmark target).

/// Resets the peak-memory mark (writing 5 to /proc/self/clear_refs) and returns the current
/// resident size in KiB, so that the next reading of VmHWM measures only what follows.
pub fn reset_peak_memory() -> Option<u64> {
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    peak_memory_kib()
}

/// The peak resident size in KiB (VmHWM from /proc/self/status).
pub fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
