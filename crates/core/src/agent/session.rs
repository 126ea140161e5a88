//! One agent's session: the allow-list of what it may ask (docs/design.md §7a), each a method
//! that blocks (a stop samples activity and waits for exits; callers run it off their
//! protocol's thread).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::diagnose::port::PortAnswer;
use crate::front::System;
use crate::probe::Identity;

use super::plan::Plans;
use super::reply::{Cards, CarriedOut, HistoryReply, PlanReply, Restarted};
use super::AgentError;

/// How a session behaves (`pier mcp`'s options).
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// Offer no plan, stop or restart.
    pub read_only: bool,
    /// The most resources the session may stop.
    pub max_stops: usize,
    /// The activity sample of the `cards` tool (the stop always samples).
    pub sample: Duration,
}

impl Default for SessionOptions {
    fn default() -> Self {
        Self {
            read_only: false,
            max_stops: 10,
            sample: Duration::from_millis(500),
        }
    }
}

/// The MCP client, as the session knows it.
#[derive(Debug, Clone, Default)]
pub struct Client {
    /// The name the client gave (`clientInfo.name`); recorded as who asked.
    pub name: String,
    /// Its process, when `pier mcp` was started by an agent (`own::client_of`); `None`: nothing
    /// is the agent's own.
    pub process: Option<Identity>,
    /// `pier mcp`'s own start time: roots started later are this session's.
    pub since: u64,
}

/// One agent's session over one engine.
pub struct Session {
    /// The engine: probe, signaller, waiter, state folder.
    pub system: System,
    /// Who is asking.
    pub client: Client,
    /// How it behaves.
    pub opts: SessionOptions,
    plans: Plans,
    stopped: usize,
}

impl Session {
    /// A session over `system` for `client`.
    pub fn new(system: System, client: Client, opts: SessionOptions) -> Self {
        Self {
            system,
            client,
            opts,
            plans: Plans::default(),
            stopped: 0,
        }
    }

    /// The cards, scoped to `under` (folders; empty: everything) and `ports` (empty: all).
    pub fn cards(&self, under: &[PathBuf], ports: &[u16]) -> Result<Cards, AgentError> {
        todo!("{under:?} {ports:?}")
    }

    /// Who holds `port`, and whether a plan would stop it.
    pub fn port(&self, port: u16) -> Result<PortAnswer, AgentError> {
        todo!("{port}")
    }

    /// A plan to stop `ids` and the holders of `ports`, and (with `mine`) every resource the
    /// agent started itself.
    pub fn plan(
        &mut self,
        ids: &[String],
        ports: &[u16],
        mine: bool,
    ) -> Result<PlanReply, AgentError> {
        let _ = (&mut self.plans, ids, ports, mine, Instant::now());
        todo!()
    }

    /// The question the person is asked before plan `id` is carried out (`None`: no such
    /// open plan).
    pub fn question(&self, id: &str) -> Option<String> {
        let _ = id;
        todo!()
    }

    /// Marks plan `id` used without carrying it out: the person declined.
    pub fn decline(&mut self, id: &str) -> Result<(), AgentError> {
        let _ = id;
        todo!()
    }

    /// Carries plan `id` out through the full chain again, refusing what changed since.
    pub fn carry_out(&mut self, id: &str) -> Result<CarriedOut, AgentError> {
        let _ = (id, self.stopped);
        todo!()
    }

    /// The history of stops, masked.
    pub fn history(&self) -> Result<HistoryReply, AgentError> {
        todo!()
    }

    /// Restarts `snapshot`, if this agent's client stopped it.
    pub fn restart(&mut self, snapshot: &str) -> Result<Restarted, AgentError> {
        todo!("{snapshot}")
    }
}
