use std::process::ExitCode;

/// mimalloc rather than glibc's malloc: parsing and consolidating reviews allocate millions of
/// small strings and vectors, and glibc's malloc, free and consolidation of free chunks were about
/// a fifth of a large consolidation's time (`perf`, 10 agents x 1,000 findings).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Inside an agent's sandbox (bubblewrap, Linux), deep-review is only its helper: the last
    // steps before the agent runs (dispatch::sandbox::linux::inner). Nothing else of the
    // program starts there.
    #[cfg(target_os = "linux")]
    {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        if args
            .get(1)
            .is_some_and(|a| a == deep_review::dispatch::sandbox::linux::inner::SUBCOMMAND)
        {
            deep_review::dispatch::sandbox::linux::inner::main(&args[2..]);
        }
    }
    // Nothing deep-review's parent left open reaches a process it starts.
    deep_review::dispatch::descriptors::close_inherited();
    // SAFETY: first thing in main, before any thread starts.
    unsafe { deep_review::dispatch::backend::commands::keep_absolute_path_entries() };
    // One TLS crypto provider for every HTTP client of the process (rustls panics at the first
    // handshake when none, or more than one, could be the default).
    deep_review::dispatch::backend::http::install_crypto_provider();
    deep_review::cli::main()
}
