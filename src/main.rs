fn main() -> std::process::ExitCode {
    oslab::cli::main()
}
