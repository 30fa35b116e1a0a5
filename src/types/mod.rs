//! The data that flows between the pipeline's stages. Plain serde types with no behaviour
//! beyond parsing and naming, so every stage can be fed and inspected on its own.

pub mod agent;
pub mod brief;
pub mod change;
pub mod finding;
pub mod history;
pub mod limits;
pub mod outcomes;
pub mod raw;
pub mod reliability;
pub mod report;
pub mod review;
pub mod rounds;
pub mod verification;

pub use agent::{
    AgentKind, AgentSpec, BackendKind, DEFAULT_MAX_OUTPUT_TOKENS, DEFAULT_TIMEOUT, HttpSettings,
    KNOWN_AGENTS, NetworkMode,
};
pub use brief::Brief;
pub use change::{ChangeKind, ChangedFile, Hunk, Target};
pub use finding::{Category, CodeSnippet, Finding, Location, Severity};
pub use limits::{LimitKind, Limits};
pub use raw::{Failure, NetworkRecord, RawReview, RunStatus, TokenUsage};
pub use reliability::{AgentRecord, Reliability, ReliabilityMethod};
pub use report::{
    AgentRetro, AppendixEntry, AttributedNote, BudgetReport, CheckoutCheck, CommitInfo, FileCount,
    MergedFinding, MergedObservation, PrInfo, Report, ReportMeta, RequestKind, ReviewThread,
    Reviewer, SeverityCounts, SourceRef, SynthesisInfo, SynthesisStatus, Tier, Verdict,
};
pub use review::{
    CoverageEntry, Observation, ObservationKind, ParseWarning, Review, TestingAssessment,
    default_display,
};
pub use rounds::{
    Action, PriorItem, PriorRef, PriorRounds, Resolution, ResolutionItem, RoundStatus,
};
pub use verification::{Verification, VerificationStatus};
