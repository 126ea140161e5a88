//! The MCP server: one tool per `Session` method of the allow-list (docs/design.md §7a),
//! each checking its input (`input`), running the session's blocking method off the
//! protocol's thread, and answering through `reply`. `--read-only` lists only the tools that
//! change nothing, and refuses the others by name before anything else is looked at.

use std::sync::{Arc, Mutex};

use pier_core::agent::{AgentError, Session};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::{InputResponses as Answers, RequestState, ToolCallContext};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, Implementation,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ResultType, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer, ServerHandler};

use crate::confirm::{self, Ask, Pending};
use crate::input::{self, CardsArgs, CarryOutArgs, HistoryArgs, PlanArgs, PortArgs, RestartArgs};
use crate::reply::{self, Confirmed};

/// The tools `--read-only` neither lists nor runs: a plan leads to a stop, and a restart
/// starts a program.
pub const WRITES: [&str; 3] = ["plan_stop", "carry_out", "restart"];

/// Who asked, when the client gave no name.
pub const UNKNOWN_CLIENT: &str = "unknown client";

/// What the model is told about the server at the handshake.
const INSTRUCTIONS: &str = "Pier finds dev servers and watchers left running on this machine \
and stops them safely. `cards` shows them, green (safe to stop), yellow or red, each with its \
evidence and, when not green, what would make it stoppable. To stop: `plan_stop` (ids from \
`cards`, or ports, or `mine` for what you started yourself), then `carry_out` with the plan id; \
the person may be asked to confirm. Yellow, red and protected resources are refused whatever \
the arguments. `restart` starts again what you stopped.";

/// A sentence for a session left unusable by a failure inside Pier.
const BROKEN: &str = "an earlier request failed inside Pier, so this session refuses the \
rest: restart `pier mcp` (the person's MCP client can), and report the error it logged";

/// Pier's MCP server over one agent's session.
#[derive(Clone)]
pub struct Pier {
    session: Arc<Mutex<Session>>,
    read_only: bool,
    pending: Arc<Pending>,
    router: ToolRouter<Self>,
}

/// The name recorded as who asked: the client's (its first 64 characters), or
/// [`UNKNOWN_CLIENT`]. Why bounded: it is written into every record the session makes.
pub fn client_name(info: Option<&Implementation>) -> String {
    info.map(|i| i.name.trim())
        .filter(|n| !n.is_empty())
        .unwrap_or(UNKNOWN_CLIENT)
        .chars()
        .take(64)
        .collect()
}

/// Whether the tool is offered: every tool, or with `--read-only` those that change nothing.
pub fn offered(read_only: bool, tool: &str) -> bool {
    !(read_only && WRITES.contains(&tool))
}

/// What a `carry_out` does after asking (or not asking) the person.
enum Gate {
    /// Carry the plan out.
    Go(Confirmed),
    /// Answer now: the question, or a refusal.
    Answer(CallToolResponse),
}

impl Pier {
    /// A server over `session`; `session.opts.read_only` decides what it offers.
    pub fn new(session: Session) -> Self {
        Self {
            read_only: session.opts.read_only,
            session: Arc::new(Mutex::new(session)),
            pending: Arc::default(),
            router: Self::tool_router(),
        }
    }

    /// The session, shared: `serve` waits on it for a stop under way before it leaves.
    pub fn session(&self) -> Arc<Mutex<Session>> {
        Arc::clone(&self.session)
    }

    /// Runs `f` on the session off the protocol's thread (its methods sample and wait),
    /// recording the requesting client's name first. A panic inside becomes a refusal, and
    /// leaves the session refusing the rest.
    async fn run<T, F>(&self, ctx: &RequestContext<RoleServer>, f: F) -> Result<T, AgentError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Session) -> Result<T, AgentError> + Send + 'static,
    {
        let name = client_name(ctx.client_info().as_ref());
        let session = Arc::clone(&self.session);
        let job = tokio::task::spawn_blocking(move || {
            let mut s = session
                .lock()
                .map_err(|_| AgentError::Failed(BROKEN.into()))?;
            // The first name given is the session's: a later request (2026-07-28 names the
            // client on each) cannot pass for another client, whose stops it could restart.
            if s.client.name == UNKNOWN_CLIENT {
                s.client.name = name;
            }
            f(&mut s)
        });
        job.await
            .unwrap_or_else(|_| Err(AgentError::Failed(BROKEN.into())))
    }

    /// Asks the person about `plan` where the client can: the inline question, or the
    /// `elicitation/create` request and its answer. A no is recorded (the plan is used).
    async fn ask(
        &self,
        ctx: &RequestContext<RoleServer>,
        plan: &str,
        state: Option<String>,
        responses: Option<rmcp::model::InputResponses>,
    ) -> Gate {
        let ask = confirm::how(ctx);
        if ask == Ask::Cannot {
            return Gate::Go(Confirmed::NotAsked);
        }
        let answered = match ask {
            Ask::Inline => self
                .pending
                .answer(plan, state.as_deref(), responses.as_ref()),
            _ => None,
        };
        let answer = match answered {
            Some(answer) => answer,
            None => {
                let id = plan.to_owned();
                let question = match self.run(ctx, move |s| Ok(s.question(&id))).await {
                    Ok(Some(q)) => q,
                    // No plan that may be carried out: carrying it out refuses, saying why, on
                    // the record, and no person is asked about it.
                    Ok(None) => return Gate::Go(Confirmed::NotAsked),
                    Err(e) => return Gate::Answer(reply::refused(&e).into()),
                };
                if ask == Ask::Inline {
                    return Gate::Answer(self.pending.ask(plan, &question).into());
                }
                match ctx.peer.create_elicitation(confirm::form(&question)).await {
                    Ok(answer) => answer,
                    Err(e) => {
                        let e = AgentError::Unasked(e.to_string());
                        return Gate::Answer(reply::refused(&e).into());
                    }
                }
            }
        };
        if confirm::said_yes(&answer) {
            return Gate::Go(Confirmed::ByPerson);
        }
        let id = plan.to_owned();
        let answer = match self.run(ctx, move |s| s.decline(&id)).await {
            Ok(d) => reply::declined(d.record_error.as_deref()),
            Err(e) => reply::refused(&e),
        };
        Gate::Answer(answer.into())
    }
}

#[tool_router]
impl Pier {
    /// The cards: every dev server, watcher and container Pier found, green (safe to stop),
    /// yellow or red, with the evidence, argv secrets masked, and for each that is not green
    /// what would make it stoppable or who can stop it. The reply's `mine` lists the ids this
    /// agent started itself during this session.
    #[tool(annotations(
        title = "Dev residue cards",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn cards(
        &self,
        Parameters(args): Parameters<CardsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let checked = input::all(&args.under, |f| input::folder(f))
            .and_then(|under| Ok((under, input::all(&args.ports, input::port)?)));
        let reply = match checked {
            Ok((under, ports)) => self.run(&ctx, move |s| s.cards(&under, &ports)).await,
            Err(e) => Err(e),
        };
        reply::answer(reply, reply::cards_text)
    }

    /// Who holds a TCP port (a resource, a container, another program), and whether a plan
    /// would stop it.
    #[tool(annotations(
        title = "Who holds a port",
        read_only_hint = true,
        open_world_hint = false
    ))]
    async fn who_holds_port(
        &self,
        Parameters(args): Parameters<PortArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let reply = match input::port(&args.port) {
            Ok(port) => self.run(&ctx, move |s| s.port(port)).await,
            Err(e) => Err(e),
        };
        reply::answer(reply, reply::port_text)
    }

    /// A stop plan: what would be stopped (green resources, and with `mine` what this agent
    /// started itself) and what would not, with why. Nothing is signalled: carry the plan out
    /// with `carry_out` within its lifetime, once.
    #[tool(annotations(title = "Plan a stop", read_only_hint = true, open_world_hint = false))]
    async fn plan_stop(
        &self,
        Parameters(args): Parameters<PlanArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let checked = input::all(&args.ids, input::id)
            .and_then(|ids| Ok((ids, input::all(&args.ports, input::port)?)));
        let reply = match checked {
            Ok((ids, ports)) => {
                let mine = args.mine;
                self.run(&ctx, move |s| s.plan(&ids, &ports, mine)).await
            }
            Err(e) => Err(e),
        };
        reply::answer(reply, reply::plan_text)
    }

    /// Carries a plan out: the person is asked to confirm where the client can ask, then every
    /// target goes through Pier's full safety chain again and is refused if anything planned
    /// on changed. One honest result per target.
    #[tool(annotations(
        title = "Carry out a stop plan",
        read_only_hint = false,
        destructive_hint = true,
        idempotent_hint = false,
        open_world_hint = false
    ))]
    async fn carry_out(
        &self,
        Parameters(args): Parameters<CarryOutArgs>,
        RequestState(state): RequestState,
        Answers(responses): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResponse {
        let how = match self.ask(&ctx, &args.plan, state, responses).await {
            Gate::Go(how) => how,
            Gate::Answer(answer) => return answer,
        };
        let plan = args.plan;
        match self.run(&ctx, move |s| s.carry_out(&plan)).await {
            Ok(done) => reply::carried_out(&done, how).into(),
            Err(e) => reply::refused(&e).into(),
        }
    }

    /// The history of stops, argv secrets masked: each record's snapshot, what it stopped, how
    /// it ended, and whether it can be restarted.
    #[tool(annotations(title = "Stop history", read_only_hint = true, open_world_hint = false))]
    async fn history(
        &self,
        Parameters(HistoryArgs {}): Parameters<HistoryArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let reply = self.run(&ctx, |s| s.history()).await;
        reply::answer(reply, reply::history_text)
    }

    /// Starts again, exactly as recorded, a resource this agent stopped itself.
    #[tool(annotations(
        title = "Restart what this agent stopped",
        read_only_hint = false,
        destructive_hint = false,
        open_world_hint = false
    ))]
    async fn restart(
        &self,
        Parameters(args): Parameters<RestartArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> CallToolResult {
        let snapshot = args.snapshot;
        let reply = self.run(&ctx, move |s| s.restart(&snapshot)).await;
        reply::answer(reply, reply::restart_text)
    }
}

impl ServerHandler for Pier {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("pier", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(INSTRUCTIONS.into());
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let cache_hints = ctx
            .protocol_version()
            .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28);
        let tools = self.router.list_all().into_iter();
        Ok(ListToolsResult {
            result_type: Some(ResultType::COMPLETE),
            tools: tools.filter(|t| offered(self.read_only, &t.name)).collect(),
            meta: None,
            next_cursor: None,
            ttl_ms: cache_hints.then_some(0),
            cache_scope: cache_hints.then_some(CacheScope::Public),
        })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if !offered(self.read_only, &request.name) {
            return Ok(reply::refused(&AgentError::ReadOnly).into());
        }
        let call = ToolCallContext::new(self, request, ctx);
        self.router.call(call).await
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.router
            .get(name)
            .filter(|t| offered(self.read_only, &t.name))
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn who_asked_is_the_clients_name_or_unknown_client() {
        let named = Implementation::new("claude-code", "2.1");
        assert_eq!(client_name(Some(&named)), "claude-code");
        assert_eq!(
            client_name(Some(&Implementation::new("  ", "1"))),
            UNKNOWN_CLIENT
        );
        assert_eq!(client_name(None), UNKNOWN_CLIENT);
        let long = Implementation::new("x".repeat(10_000), "1");
        assert_eq!(client_name(Some(&long)).len(), 64);
    }

    #[test]
    fn read_only_offers_no_plan_stop_or_restart() {
        for tool in ["cards", "who_holds_port", "history"] {
            assert!(offered(true, tool) && offered(false, tool), "{tool}");
        }
        for tool in WRITES {
            assert!(!offered(true, tool) && offered(false, tool), "{tool}");
        }
    }
}
