//! `deep-review completions SHELL` and `deep-review man`: generated from the clap definition
//! (clap_complete, clap_mangen), so they never drift from the real options.

use std::process::ExitCode;

use clap::Args;
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

pub fn completions(args: CompletionsArgs) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut super::command(), "deep-review", &mut out);
    super::print_out(&String::from_utf8_lossy(&out))?;
    Ok(ExitCode::SUCCESS)
}

/// One manual page for the whole tool: `deep-review man > deep-review.1` installs all of it.
/// clap_mangen's own page lists each command as a page of its own (`deep-review-run(1)`) that
/// nothing installs; here every command is a section of this page, with its synopsis and
/// options.
pub fn man() -> anyhow::Result<ExitCode> {
    super::print_out(&man_page()?)?;
    Ok(ExitCode::SUCCESS)
}

/// The roff text of [`man`].
pub fn man_page() -> anyhow::Result<String> {
    let mut cmd = super::command().disable_help_subcommand(true);
    cmd.build();
    let top = clap_mangen::Man::new(cmd.clone());
    let mut out = Vec::new();
    top.render_title(&mut out)?;
    top.render_name_section(&mut out)?;
    top.render_synopsis_section(&mut out)?;
    top.render_description_section(&mut out)?;
    top.render_options_section(&mut out)?;
    out.extend_from_slice(b".SH COMMANDS\n");
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let page = clap_mangen::Man::new(sub.clone());
        let mut part = Vec::new();
        page.render_synopsis_section(&mut part)?;
        page.render_description_section(&mut part)?;
        page.render_options_section(&mut part)?;
        let part = String::from_utf8_lossy(&part)
            .replace(".SH SYNOPSIS\n", "")
            .replace(".SH DESCRIPTION\n", ".PP\n")
            .replace(".SH OPTIONS\n", ".PP\nOptions:\n");
        out.extend_from_slice(
            format!(".SS \"deep\\-review {}\"\n{part}", sub.get_name()).as_bytes(),
        );
    }
    top.render_extra_section(&mut out)?;
    top.render_version_section(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}
