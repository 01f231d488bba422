//! The rmcp side: server info, `tools/list` from `tools.rs`, `tools/call` run on tokio's
//! blocking pool (a call waits for the engine thread), stdio transport behind `wire.rs`'s
//! line checks. The protocol (initialize, version negotiation, ping, JSON-RPC errors for
//! what parses) is rmcp's.

use crate::session::Session;
use crate::tools;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use std::sync::Arc;

struct Handler {
    session: Arc<Session>,
    /// Taken by each tool call before it runs: tokio's mutex queues waiters first come, first
    /// served, so calls run one at a time in the order they arrived (a client that sends
    /// several without waiting gets the scene they describe, whatever the blocking pool's
    /// threads do).
    turn: Arc<tokio::sync::Mutex<()>>,
}

const INSTRUCTIONS: &str = "procmodel runs Roblox ProceduralModel generators (Luau ModuleScripts returning { Attributes = {...}, OnGenerate = function(params, container) }) headless and sandboxed. Create one with create_generator, inspect with list_models/get_attributes, change inputs with set_attributes/set_size (each regenerates and reports), read failures with get_errors, undo/redo, then export (.glb/.rbxm) or pack for Studio. Files are written only under the server's root directory.";

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("procmodel", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            tools::all().into_iter().map(to_rmcp).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools::all()
            .into_iter()
            .find(|t| t.name == name)
            .map(to_rmcp)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let session = self.session.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        let turn = self.turn.clone().lock_owned().await;
        let outcome = tokio::task::spawn_blocking(move || {
            let outcome = session.call(&name, &arguments);
            drop(turn);
            outcome
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("tool call failed: {e}"), None))?
        // An unknown tool is a protocol error (-32602), as the MCP specification's tools
        // section has it; a known tool's refusal of its arguments is the tool's error result,
        // which the model reads and corrects.
        .map_err(|unknown| ErrorData::invalid_params(unknown, None))?;
        let text = serde_json::to_string_pretty(&outcome.value).unwrap_or_default();
        let mut result = if outcome.is_error {
            CallToolResult::error(vec![ContentBlock::text(text)])
        } else {
            CallToolResult::success(vec![ContentBlock::text(text)])
        };
        result.structured_content = Some(outcome.value);
        Ok(result.into())
    }
}

fn to_rmcp(t: tools::Tool) -> Tool {
    let schema = match t.schema {
        serde_json::Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    Tool::new(t.name, t.description, Arc::new(schema))
}

/// Serves the session over stdio until the client disconnects.
pub fn run(session: Session) -> Result<(), crate::Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| crate::Error::Transport(e.to_string()))?;
    let handler = Handler {
        session: Arc::new(session),
        turn: Arc::new(tokio::sync::Mutex::new(())),
    };
    runtime.block_on(async move {
        let (wire, reader, writer) =
            crate::wire::Wire::new(tokio::io::stdin(), tokio::io::stdout());
        let outcome = match handler.serve((reader, writer)).await {
            Ok(service) => service
                .waiting()
                .await
                .map(drop)
                .map_err(|e| crate::Error::Transport(e.to_string())),
            // The client went away before a session started (a probe, or a client that
            // gave up after an error): the server ends as it does after a session.
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => Ok(()),
            Err(e) => Err(crate::Error::Transport(e.to_string())),
        };
        // Every answer written so far reaches the client, however the session ended.
        wire.finish()
            .await
            .map_err(|e| crate::Error::Transport(e.to_string()))?;
        outcome
    })
}
