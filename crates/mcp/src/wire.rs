//! The stdio wire in front of rmcp: every line a client sends is checked before rmcp sees
//! it, so a line rmcp would drop in silence gets the JSON-RPC error the specification asks
//! for — `-32700` for text that is not JSON, `-32600` for JSON that is not a request, and
//! `-32602` for a request of a known method whose params do not fit — and a client never
//! waits for an answer that will not come. Before the client's `initialize` request, another
//! request gets `-32002` and a notification is dropped (rmcp would end the session on
//! either). Lines that pass go to rmcp unchanged; rmcp's
//! messages and these errors are written to stdout whole lines at a time, never interleaved.
//! This module never interprets a valid message (that is rmcp's and the handler's).

use rmcp::model::{ClientJsonRpcMessage, ClientRequest};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, DuplexStream};
use tokio::sync::mpsc;

/// How many bytes of an offending line an error message quotes.
const QUOTE: usize = 80;

/// The verdict on one line from the client.
#[derive(Debug, PartialEq)]
pub(crate) enum Verdict {
    /// A message rmcp will take (or a blank line, skipped).
    Pass,
    /// Not for rmcp: this JSON-RPC error answers it instead.
    Reply(Value),
    /// Not for rmcp, and unanswered (a notification before the session starts).
    Drop,
}

/// What becomes of a line that passed [`check`] before the session started: the initialize
/// request passes; another request is answered `-32002` (the code JSON-RPC servers use for
/// "not initialized"); anything else is dropped.
pub(crate) fn before_initialize(line: &str) -> Verdict {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Verdict::Drop;
    };
    match (value.get("method").and_then(Value::as_str), value.get("id")) {
        // Only an initialize request rmcp can take starts the session: rmcp answers a
        // malformed one with an error and waits for another, which this wire must do too
        // (the requests after it still get "not initialized").
        (Some("initialize"), Some(id)) => match serde_json::from_value(value.clone()) {
            Ok(ClientJsonRpcMessage::Request(r))
                if matches!(r.request, ClientRequest::InitializeRequest(_)) =>
            {
                Verdict::Pass
            }
            _ => Verdict::Reply(error(
                id.clone(),
                -32602,
                "Invalid params for initialize: it needs \"protocolVersion\" (a string), \
                 \"capabilities\" and \"clientInfo\" (name and version)"
                    .into(),
            )),
        },
        (Some(m), Some(id)) => Verdict::Reply(error(
            id.clone(),
            -32002,
            format!("the server is not initialized: send initialize before {m}"),
        )),
        _ => Verdict::Drop,
    }
}

/// Checks one line as the client sent it (without its newline).
pub(crate) fn check(line: &str) -> Verdict {
    let line = line.strip_prefix('\u{feff}').unwrap_or(line);
    if line.trim().is_empty() {
        return Verdict::Pass;
    }
    let value: Value = match serde_json::from_str(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Reply(error(
                Value::Null,
                -32700,
                format!("Parse error: not JSON ({e}): {}", quote(line)),
            ));
        }
    };
    let err = match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(_) => return Verdict::Pass,
        Err(e) => e,
    };
    let id = match value.get("id") {
        Some(id @ (Value::String(_) | Value::Number(_))) => id.clone(),
        _ => Value::Null,
    };
    let method = value.get("method").and_then(Value::as_str);
    match method {
        // A notification rmcp does not know: rmcp ignores those by design, and a
        // notification never gets an answer.
        Some(_) if value.get("id").is_none() => Verdict::Pass,
        Some(m) if value.get("jsonrpc") == Some(&json!("2.0")) && !id.is_null() => {
            Verdict::Reply(error(id, -32602, format!("Invalid params for {m}: {err}")))
        }
        _ => Verdict::Reply(error(
            id,
            -32600,
            format!(
                "Invalid Request: a JSON-RPC 2.0 message needs \"jsonrpc\": \"2.0\", a \"method\" \
                 and an \"id\" that is a string or a number ({err}): {}",
                quote(line)
            ),
        )),
    }
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({ "jsonrpc": "2.0", "id": id, "error": { "code": code, "message": message } })
}

fn quote(line: &str) -> String {
    match line.char_indices().nth(QUOTE) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}

/// The tasks that feed rmcp's ends from `input` and drain them to `output`. Await
/// [`Wire::finish`] after the service ends so every answer is written.
pub(crate) struct Wire {
    pump_in: tokio::task::JoinHandle<()>,
    pump_out: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The longest line taken (rmcp's own cap for one message over stdio).
const MAX_LINE: usize = 16 * 1024 * 1024;

/// One line from the client.
enum Line {
    Text(String),
    NotUtf8,
    /// Longer than [`MAX_LINE`]: its bytes were read and dropped, never held.
    TooLong,
}

/// The next line of `input` without its line ending; `None` at the end of input. A line
/// longer than [`MAX_LINE`] is skipped to its end without holding it in memory.
async fn next_line<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
) -> std::io::Result<Option<Line>> {
    let mut buf = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = input.fill_buf().await?;
        if chunk.is_empty() {
            if buf.is_empty() && !too_long {
                return Ok(None);
            }
            break;
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(at) => (at, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > MAX_LINE {
                too_long = true;
                buf = Vec::new();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        input.consume(take + usize::from(done));
        if done {
            break;
        }
    }
    if too_long {
        return Ok(Some(Line::TooLong));
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(match String::from_utf8(buf) {
        Ok(s) => Line::Text(s),
        Err(_) => Line::NotUtf8,
    }))
}

/// Room in each in-process pipe: messages larger than this simply take several writes.
const PIPE: usize = 1 << 16;

impl Wire {
    /// The pumps, and the two ends rmcp serves on (it reads the first, writes the second).
    pub(crate) fn new<R, W>(input: R, output: W) -> (Wire, DuplexStream, DuplexStream)
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (mut to_rmcp, reader) = tokio::io::duplex(PIPE);
        let (writer, from_rmcp) = tokio::io::duplex(PIPE);
        let (errors_tx, mut errors_rx) = mpsc::unbounded_channel::<String>();
        let pump_in = tokio::spawn(async move {
            let mut input = BufReader::new(input);
            let mut initialized = false;
            // Ends at the client's end of input (or a read error, which ends the session the
            // same way): dropping `to_rmcp` tells rmcp the client is gone.
            while let Ok(Some(line)) = next_line(&mut input).await {
                let verdict = match &line {
                    Line::Text(text) => check(text),
                    Line::NotUtf8 => Verdict::Reply(error(
                        Value::Null,
                        -32700,
                        "Parse error: the line is not UTF-8".into(),
                    )),
                    Line::TooLong => Verdict::Reply(error(
                        Value::Null,
                        -32600,
                        format!("Invalid Request: a line longer than {MAX_LINE} bytes"),
                    )),
                };
                // Until the client's initialize request, rmcp ends the session on any other
                // message: answer requests with "not initialized" and drop notifications.
                let verdict = match (&verdict, &line) {
                    (Verdict::Pass, Line::Text(text)) if !initialized => {
                        let v = before_initialize(text);
                        initialized = v == Verdict::Pass;
                        v
                    }
                    _ => verdict,
                };
                match (verdict, line) {
                    (Verdict::Drop, _) => {}
                    (Verdict::Pass, Line::Text(text)) if text.trim().is_empty() => {}
                    (Verdict::Pass, Line::Text(text)) => {
                        let mut bytes = text.into_bytes();
                        bytes.push(b'\n');
                        if to_rmcp.write_all(&bytes).await.is_err() {
                            break;
                        }
                    }
                    (Verdict::Pass, _) => {}
                    (Verdict::Reply(v), _) => {
                        if errors_tx.send(v.to_string()).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let pump_out = tokio::spawn(async move {
            let mut output = output;
            let mut from_rmcp = BufReader::new(from_rmcp).lines();
            let mut rmcp_open = true;
            let mut errors_open = true;
            while rmcp_open || errors_open {
                let line = tokio::select! {
                    l = from_rmcp.next_line(), if rmcp_open => match l? {
                        Some(l) => l,
                        None => { rmcp_open = false; continue; }
                    },
                    e = errors_rx.recv(), if errors_open => match e {
                        Some(e) => e,
                        None => { errors_open = false; continue; }
                    },
                };
                output.write_all(line.as_bytes()).await?;
                output.write_all(b"\n").await?;
                output.flush().await?;
            }
            Ok(())
        });
        (Wire { pump_in, pump_out }, reader, writer)
    }

    /// Waits until everything rmcp and the checks wrote is on the output. Call it once the
    /// service has ended and dropped its ends of the pipes.
    pub(crate) async fn finish(self) -> std::io::Result<()> {
        self.pump_in.abort();
        match self.pump_out.await {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(e.to_string())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> (i64, Value) {
        match v {
            Verdict::Reply(e) => (e["error"]["code"].as_i64().unwrap(), e["id"].clone()),
            other => panic!("expected an error reply, got {other:?}"),
        }
    }

    #[test]
    fn requests_and_notifications_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"no/such/method"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/custom","params":{"x":1}}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}",
            "",
            "   ",
        ] {
            assert_eq!(check(line), Verdict::Pass, "{line}");
        }
    }

    #[test]
    fn text_that_is_not_json_is_a_parse_error() {
        for line in [
            "{ this is not json",
            "hello",
            "{\"jsonrpc\":\"2.0\",",
            "\u{1}",
        ] {
            assert_eq!(code(&check(line)), (-32700, Value::Null), "{line}");
        }
    }

    #[test]
    fn json_that_is_no_request_is_invalid() {
        assert_eq!(code(&check("42")), (-32600, Value::Null));
        assert_eq!(code(&check("[]")), (-32600, Value::Null));
        assert_eq!(code(&check(r#"{"id":3}"#)), (-32600, json!(3)));
        assert_eq!(
            code(&check(r#"{"id":3,"method":"ping"}"#)),
            (-32600, json!(3)),
            "no jsonrpc member"
        );
    }

    #[test]
    fn bad_params_of_a_known_method_name_the_method() {
        let v = check(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":"oops"}"#);
        assert_eq!(code(&v), (-32602, json!(9)));
        let Verdict::Reply(e) = v else { unreachable!() };
        assert!(
            e["error"]["message"]
                .as_str()
                .unwrap()
                .contains("tools/call"),
            "{e}"
        );
    }

    #[test]
    fn before_the_session_only_initialize_passes() {
        assert_eq!(
            before_initialize(
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#
            ),
            Verdict::Pass
        );
        // One rmcp would refuse does not start the session.
        for params in [r#","params":{}"#, "", r#","params":{"protocolVersion":5}"#] {
            let line = format!(r#"{{"jsonrpc":"2.0","id":0,"method":"initialize"{params}}}"#);
            assert_eq!(
                code(&before_initialize(&line)),
                (-32602, json!(0)),
                "{line}"
            );
        }
        assert_eq!(
            code(&before_initialize(
                r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#
            )),
            (-32002, json!(4))
        );
        assert_eq!(
            before_initialize(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Verdict::Drop
        );
    }

    #[test]
    fn long_lines_are_quoted_short() {
        let line = "x".repeat(10_000);
        let Verdict::Reply(e) = check(&line) else {
            panic!()
        };
        assert!(e["error"]["message"].as_str().unwrap().len() < 300, "{e}");
    }
}
