//! The workloads: what each one puts on the runtime, and its default sizes.
//! Every size is a knob (see `settings`), so each workload also runs small.

use std::fmt;

/// One named workload of `cargo bench --bench load -- <workload>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Workload {
    /// Every task due at once over a few destinations, throttles wide open:
    /// how fast one process drains a backlog.
    Burst,
    /// A fixed arrival rate for a fixed time: the lag between a task's due
    /// time and its delivery while the runtime keeps up.
    Steady,
    /// Low per-destination rates, and a receiver that answers 429 with
    /// Retry-After past its own per-destination limit: the throttles and
    /// pauses under a backlog.
    Throttled,
    /// The burst spread over thousands of destinations: the claim's
    /// per-destination probes and one throttle per destination.
    ManyDestinations,
    /// The steady workload for ten minutes, sampled: does throughput hold
    /// while dead tuples pile up and autovacuum runs.
    Soak,
    /// The burst drained by 1, 2 and 4 processes of the region.
    ScaleOut,
    /// The first user's shape: account-renewal reminders of many tenants
    /// over many destinations, a steady stream due now arriving on a
    /// table that already holds a month of history and a year of future
    /// reminders (see `backdrop`): whether the stream stays on time when
    /// most of the table is not due.
    Renewals,
}

/// Arrivals that join an ordering line: every `every`th arrival, on one of
/// `keys` lines in turn, each line at a destination of its own.
#[derive(Debug, Clone, Copy)]
pub struct Lines {
    pub every: usize,
    pub keys: usize,
}

/// Sizes a workload starts from when no knob overrides them.
#[derive(Debug, Clone)]
pub struct Defaults {
    pub tasks: usize,
    pub destinations: usize,
    /// Arrivals per second (paced workloads).
    pub rate: f64,
    /// How long arrivals last (paced workloads).
    pub seconds: f64,
    pub processes: Vec<usize>,
    /// remit's per-destination rate and burst; `None` opens the throttles.
    pub destination_rate: Option<(f64, u32)>,
    /// Requests per second per destination the receiver accepts before it
    /// answers 429; `None` accepts everything.
    pub receiver_rate: Option<f64>,
    /// remit's per-destination in-flight cap.
    pub destination_in_flight: u32,
    /// Tasks written into the table in SQL before arrivals start (paced
    /// workloads; see `backdrop`).
    pub backdrop: usize,
    /// Tenants the arrivals (and the backdrop) are spread over.
    pub tenants: usize,
    /// Arrivals that carry an ordering key.
    pub lines: Option<Lines>,
}

impl Workload {
    pub const ALL: [Workload; 7] = [
        Workload::Burst,
        Workload::Steady,
        Workload::Throttled,
        Workload::ManyDestinations,
        Workload::Soak,
        Workload::ScaleOut,
        Workload::Renewals,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Workload::Burst => "burst",
            Workload::Steady => "steady",
            Workload::Throttled => "throttled",
            Workload::ManyDestinations => "many-destinations",
            Workload::Soak => "soak",
            Workload::ScaleOut => "scale-out",
            Workload::Renewals => "renewals",
        }
    }

    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|w| w.name() == name)
    }

    /// Paced workloads enqueue while the runtime delivers; the others
    /// enqueue everything first and then time the drain.
    pub fn is_paced(self) -> bool {
        matches!(self, Workload::Steady | Workload::Soak | Workload::Renewals)
    }

    pub fn defaults(self) -> Defaults {
        let open = Defaults {
            tasks: 50_000,
            destinations: 50,
            rate: 200.0,
            seconds: 60.0,
            processes: vec![1],
            destination_rate: None,
            receiver_rate: None,
            destination_in_flight: 64,
            backdrop: 0,
            tenants: 1,
            lines: None,
        };
        match self {
            Workload::Burst | Workload::Steady => open,
            Workload::Throttled => Defaults {
                tasks: 5_000,
                destination_rate: Some((5.0, 5)),
                receiver_rate: Some(4.0),
                destination_in_flight: 4,
                ..open
            },
            Workload::ManyDestinations => Defaults {
                destinations: 5_000,
                ..open
            },
            Workload::Soak => Defaults {
                seconds: 600.0,
                ..open
            },
            Workload::ScaleOut => Defaults {
                processes: vec![1, 2, 4],
                ..open
            },
            // A million reminders of 10,000 tenants over 1,000 receivers,
            // and 300 new ones due each second. Every hundredth joins one
            // of five ordering lines of the stream's own: joining one of
            // the backdrop's would hold it behind a head due months ahead.
            Workload::Renewals => Defaults {
                destinations: 1_000,
                rate: 300.0,
                backdrop: 1_000_000,
                tenants: 10_000,
                lines: Some(Lines {
                    every: 100,
                    keys: 5,
                }),
                ..open
            },
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
