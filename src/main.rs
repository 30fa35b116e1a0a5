use std::process::ExitCode;

fn main() -> ExitCode {
    deep_review::cli::main()
}
