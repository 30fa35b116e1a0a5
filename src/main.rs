use std::process::ExitCode;

fn main() -> ExitCode {
    // One TLS crypto provider for every HTTP client of the process (rustls panics at the first
    // handshake when none, or more than one, could be the default).
    deep_review::dispatch::backend::http::install_crypto_provider();
    deep_review::cli::main()
}
