//! Which sandbox a run gets: the mode asked for, what this machine offers, and the layers that
//! result, named as the report, `meta.json` and `deep-review agents` name them.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::types::AgentSpec;

/// Which sandbox a run asks for: `DEEP_REVIEW_SANDBOX` = `auto` (the default: the strongest
/// available), `landlock` (Landlock alone, to compare or where bwrap misbehaves) or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Auto,
    LandlockOnly,
    Off,
}

impl Mode {
    /// The mode the environment asks for.
    pub fn from_env() -> Result<Mode, String> {
        match std::env::var("DEEP_REVIEW_SANDBOX") {
            Err(_) => Ok(Mode::Auto),
            Ok(value) => match value.trim().to_ascii_lowercase().as_str() {
                "" | "auto" => Ok(Mode::Auto),
                "landlock" => Ok(Mode::LandlockOnly),
                "none" | "off" => Ok(Mode::Off),
                other => Err(format!(
                    "DEEP_REVIEW_SANDBOX=`{}` is not a sandbox mode: use auto, landlock or none",
                    crate::text::printable_line(other)
                )),
            },
        }
    }
}

/// The layers an agent runs under: what the report, `meta.json` and `deep-review agents` name.
/// Whole on every platform (a platform makes only its own), so that a report read anywhere names
/// them the same.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Layers {
    /// bubblewrap's namespaces with Landlock inside (`landlock_abi` 0: the kernel has none).
    Bwrap { landlock_abi: i32 },
    /// Landlock alone, with capabilities dropped and a new session.
    LandlockOnly { abi: i32 },
    /// macOS: Seatbelt (`sandbox-exec`) with a profile made from the policy.
    Seatbelt,
    /// No OS sandbox, because `DEEP_REVIEW_SANDBOX=none` asked for none: why.
    None { why: String },
    /// No OS sandbox could be made here, and none was declined: agents do not start. Why not.
    Unavailable { why: String },
}

impl Layers {
    /// The short name: `bwrap+landlock`, `landlock only: ...`, `seatbelt`, `none: ...`.
    pub fn name(&self) -> String {
        match self {
            Layers::Bwrap { landlock_abi } if *landlock_abi > 0 => "bwrap+landlock".into(),
            Layers::Bwrap { .. } => "bwrap (no Landlock in this kernel)".into(),
            Layers::LandlockOnly { .. } => format!("landlock only: {}", self.not_covered()),
            Layers::Seatbelt => format!("seatbelt: {}", self.not_covered()),
            Layers::None { why } => format!(
                "none ({why}): the agent CLI's own read-only mode and a throwaway state home only"
            ),
            Layers::Unavailable { why } => unavailable_sentence(why),
        }
    }

    /// What these layers leave open, in one clause (empty for the full set).
    pub fn not_covered(&self) -> String {
        match self {
            Layers::Bwrap { landlock_abi } if *landlock_abi >= 6 => String::new(),
            Layers::Bwrap { .. } => {
                "signals and abstract sockets are scoped by namespaces only".into()
            }
            Layers::LandlockOnly { abi } => {
                let mut open = vec![
                    "processes not isolated (daemons can outlive a killed run; UNIX sockets of the user's are reachable; no process limit)",
                ];
                if *abi < 4 {
                    open.push("network not isolated");
                } else {
                    open.push(
                        "network limited to the proxy's TCP port (UDP and that port on other hosts not covered)",
                    );
                }
                if *abi < 6 {
                    open.push("signals and abstract sockets not scoped");
                }
                // SAFETY: geteuid has no preconditions.
                if unsafe { libc::geteuid() } == 0 {
                    open.push("as root, files only root may read under the system directories (/etc/shadow included) and the granted paths are readable");
                }
                open.join("; ")
            }
            // Only what was checked against the profile this code generates; nothing of it has
            // run on a Mac in deep-review's tests (docs/src/platforms.md).
            Layers::Seatbelt => "processes not isolated (daemons that leave the process group can outlive a killed run); \
                 the profile is checked on Linux, not run on a Mac by deep-review's tests"
                .into(),
            Layers::None { .. } | Layers::Unavailable { .. } => {
                "files, processes and network not isolated".into()
            }
        }
    }

    /// Whether the agent cannot write to its checkout, so that one checkout serves every agent.
    pub fn confines_files(&self) -> bool {
        !matches!(self, Layers::None { .. } | Layers::Unavailable { .. })
    }

    /// Whether only deep-review's proxy (and the forwarded loopback ports) can be reached: a
    /// namespace of its own, or a Seatbelt profile that allows nothing else.
    pub fn enforces_egress(&self) -> bool {
        matches!(self, Layers::Bwrap { .. } | Layers::Seatbelt)
    }
}

/// The sandbox of one dispatch: the layers every agent process gets, and the helper that runs
/// inside bwrap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub layers: Layers,
    pub helper: Option<PathBuf>,
}

impl Plan {
    /// The plan for `mode` on this machine with `helper`.
    pub fn new(mode: Mode, helper: Option<PathBuf>) -> Plan {
        Plan {
            layers: layers_for(mode, helper.as_deref()),
            helper,
        }
    }
}

/// What this machine offers, probed once per process by the platform's module.
#[derive(Debug, Clone)]
pub struct Support {
    /// `bwrap`, when it is installed and could make its namespaces here; else why not.
    pub bwrap: Result<PathBuf, String>,
    /// The kernel's Landlock ABI, 0 when it has none.
    pub landlock_abi: i32,
    /// `/usr/bin/sandbox-exec`, when this is a Mac that has it; else why not.
    pub seatbelt: Result<PathBuf, String>,
}

/// The probe's result, cached.
pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(super::platform::support)
}

/// The layers a run in `mode` gets on this machine. `helper` is deep-review's own executable,
/// run inside bwrap to apply Landlock and open the network: without it bwrap cannot be used.
pub fn layers_for(mode: Mode, helper: Option<&Path>) -> Layers {
    layers_from(support(), mode, helper)
}

/// The layers `support` gives a run in `mode`: the strongest there is for `auto`; what is asked
/// for, or [`Layers::Unavailable`] with why, otherwise. Never [`Layers::None`] unless asked.
fn layers_from(support: &Support, mode: Mode, helper: Option<&Path>) -> Layers {
    let landlock = || Layers::LandlockOnly {
        abi: support.landlock_abi,
    };
    match mode {
        Mode::Off => Layers::None {
            why: "DEEP_REVIEW_SANDBOX=none".into(),
        },
        Mode::LandlockOnly if support.landlock_abi > 0 => landlock(),
        Mode::LandlockOnly => Layers::Unavailable {
            why: "DEEP_REVIEW_SANDBOX=landlock, and this kernel has no Landlock".into(),
        },
        Mode::Auto => match (&support.bwrap, helper, &support.seatbelt) {
            (Ok(_), Some(_), _) => Layers::Bwrap {
                landlock_abi: support.landlock_abi,
            },
            _ if support.landlock_abi > 0 => landlock(),
            (_, _, Ok(_)) => Layers::Seatbelt,
            (bwrap, _, seatbelt) => Layers::Unavailable {
                why: unavailable_reasons(bwrap, seatbelt),
            },
        },
    }
}

/// Why no layer could be made: each mechanism's own reason, for this platform's.
fn unavailable_reasons(
    bwrap: &Result<PathBuf, String>,
    seatbelt: &Result<PathBuf, String>,
) -> String {
    let mut why = Vec::new();
    if cfg!(target_os = "macos") {
        why.extend(seatbelt.as_ref().err().cloned());
    } else {
        why.extend(bwrap.as_ref().err().cloned());
        why.push("this kernel has no Landlock".into());
    }
    if why.is_empty() {
        why.push("this platform has no sandbox deep-review can use".into());
    }
    why.join("; ")
}

/// The one sentence that stops a run whose agents cannot be sandboxed: why, and how to choose.
pub fn unavailable_sentence(why: &str) -> String {
    format!(
        "no sandbox for agent CLIs here ({why}): they do not start unconfined unless you choose \
         so with DEEP_REVIEW_SANDBOX=none, which runs them with your files, processes and \
         network reachable (their own read-only mode and a throwaway state home only)"
    )
}

/// The sandbox of this machine in one line, for `deep-review agents` and `run --dry-run`:
/// the layers and, when bwrap is not used, why.
pub fn describe_machine(plan: &Plan) -> String {
    let support = support();
    let mut line = plan.layers.name();
    if let (Layers::LandlockOnly { .. } | Layers::None { .. }, Err(why)) =
        (&plan.layers, &support.bwrap)
        && !cfg!(target_os = "macos")
    {
        line.push_str(&format!(" (no bwrap: {why})"));
    }
    if support.landlock_abi > 0 {
        line.push_str(&format!("; Landlock ABI {}", support.landlock_abi));
    }
    line
}

/// Where `spec`'s agent may connect, in one line: its allowlist, or that its network is open.
pub fn describe_network(spec: &AgentSpec, plan: &Plan) -> String {
    if spec.network == crate::types::NetworkMode::Open {
        return "open (network = \"open\" in config): not filtered".into();
    }
    let env = crate::dispatch::environment::agent_env(spec, std::env::vars_os(), &spec.env);
    let hosts = crate::dispatch::network::Allowlist::for_agent(spec, &env).describe();
    let how = match &plan.layers {
        Layers::Bwrap { .. } => "only through deep-review's proxy",
        Layers::Seatbelt => "only through deep-review's proxy (Seatbelt allows its port alone)",
        _ => "through deep-review's proxy (not enforced without bwrap)",
    };
    if hosts.is_empty() {
        format!("none ({how}; add hosts with `network_allow`)")
    } else {
        format!("{} ({how})", hosts.join(", "))
    }
}

/// Whether agents can be confined at all here (the tests and benches that need it ask).
pub fn available() -> bool {
    layers_for(Mode::Auto, Some(Path::new("/"))).confines_files()
}

/// deep-review's own executable, which serves as the helper inside bwrap: the running program
/// when it is deep-review (a test or bench binary that calls the library is not).
pub fn default_helper() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let name = exe.file_name()?.to_str()?;
    (name == "deep-review").then_some(exe)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_say_what_they_leave_open() {
        let full = Layers::Bwrap { landlock_abi: 7 };
        assert_eq!(full.name(), "bwrap+landlock");
        assert!(full.not_covered().is_empty());
        let alone = Layers::LandlockOnly { abi: 7 };
        assert!(
            alone
                .name()
                .starts_with("landlock only: processes not isolated"),
            "{}",
            alone.name()
        );
        assert!(alone.name().contains("network limited"), "{}", alone.name());
        let old = Layers::LandlockOnly { abi: 3 };
        assert!(
            old.name().contains("network not isolated"),
            "{}",
            old.name()
        );
        assert!(old.name().contains("signals"), "{}", old.name());
        assert!(!Layers::None { why: "x".into() }.confines_files());
    }

    fn machine(bwrap: bool, landlock_abi: i32, seatbelt: bool) -> Support {
        Support {
            bwrap: if bwrap {
                Ok("/usr/bin/bwrap".into())
            } else {
                Err("bwrap is not installed".into())
            },
            landlock_abi,
            seatbelt: if seatbelt {
                Ok("/usr/bin/sandbox-exec".into())
            } else {
                Err("/usr/bin/sandbox-exec is missing".into())
            },
        }
    }

    /// `auto` takes the strongest layers there are, and where there are none it does not run
    /// agents unconfined: it says why and how to choose.
    #[test]
    fn auto_never_falls_back_to_no_sandbox() {
        let helper = Some(Path::new("/usr/bin/deep-review"));
        let auto = |s: &Support| layers_from(s, Mode::Auto, helper);
        assert_eq!(
            auto(&machine(true, 6, false)),
            Layers::Bwrap { landlock_abi: 6 }
        );
        assert_eq!(
            auto(&machine(false, 6, false)),
            Layers::LandlockOnly { abi: 6 }
        );
        assert_eq!(auto(&machine(false, 0, true)), Layers::Seatbelt);
        let none = auto(&machine(false, 0, false));
        assert!(matches!(none, Layers::Unavailable { .. }), "{none:?}");
        assert!(!none.confines_files());
        let name = none.name();
        assert!(name.contains("DEEP_REVIEW_SANDBOX=none"), "{name}");
        assert!(name.contains("do not start"), "{name}");
        // Landlock asked for by name, on a kernel without it: not silently nothing either.
        let asked = layers_from(&machine(true, 0, false), Mode::LandlockOnly, helper);
        assert!(matches!(asked, Layers::Unavailable { .. }), "{asked:?}");
        // Only `none` gives none.
        let off = layers_from(&machine(true, 6, true), Mode::Off, helper);
        assert!(matches!(off, Layers::None { .. }), "{off:?}");
    }

    /// Seatbelt is named as such everywhere, with what it leaves open.
    #[test]
    fn seatbelt_is_named_with_what_it_leaves_open() {
        let name = Layers::Seatbelt.name();
        assert!(name.starts_with("seatbelt: "), "{name}");
        assert!(name.contains("processes not isolated"), "{name}");
        assert!(name.contains("not run on a Mac"), "{name}");
        assert!(Layers::Seatbelt.confines_files());
        assert!(Layers::Seatbelt.enforces_egress());
    }
}
