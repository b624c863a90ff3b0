//! Just enough of the Redis protocol (RESP2) to send FalkorDB commands: a command is an array
//! of bulk strings; a reply is a simple string, an error, an integer, a bulk string or an array
//! of replies. No dependency, and every read and write bounded by a timeout.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    Status(String),
    Error(String),
    Int(i64),
    Bulk(Option<String>),
    Array(Option<Vec<Reply>>),
}

/// Why a command got no reply.
#[derive(Debug)]
pub enum Failure {
    Connect(String),
    Timeout,
    Lost(String),
    Protocol(String),
}

pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

/// Nested arrays deeper than this are refused (a reply is never that deep).
const MAX_DEPTH: usize = 32;
/// Redis's own limit on one string (512 MB): a longer length is a broken stream, not a value.
const MAX_BULK: i64 = 512 * 1024 * 1024;

impl Connection {
    pub fn open(address: &str, timeout: Duration) -> Result<Connection, Failure> {
        let addrs = address
            .to_socket_addrs()
            .map_err(|e| Failure::Connect(e.to_string()))?;
        let mut last = Failure::Connect(format!("{address} resolves to no address"));
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, timeout) {
                Ok(stream) => {
                    let io = |e: std::io::Error| Failure::Connect(e.to_string());
                    stream.set_read_timeout(Some(timeout)).map_err(io)?;
                    stream.set_write_timeout(Some(timeout)).map_err(io)?;
                    stream.set_nodelay(true).map_err(io)?;
                    let writer = stream.try_clone().map_err(io)?;
                    return Ok(Connection {
                        reader: BufReader::new(stream),
                        writer,
                    });
                }
                Err(e) => last = Failure::Connect(e.to_string()),
            }
        }
        Err(last)
    }

    pub fn command(&mut self, args: &[&str]) -> Result<Reply, Failure> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&out).map_err(io_failure)?;
        read_reply(&mut self.reader, 0)
    }
}

fn io_failure(e: std::io::Error) -> Failure {
    use std::io::ErrorKind;
    match e.kind() {
        ErrorKind::WouldBlock | ErrorKind::TimedOut => Failure::Timeout,
        _ => Failure::Lost(e.to_string()),
    }
}

fn read_line(r: &mut impl BufRead) -> Result<String, Failure> {
    let mut buf = Vec::new();
    let n = r.read_until(b'\n', &mut buf).map_err(io_failure)?;
    if n == 0 {
        return Err(Failure::Lost("the server closed the connection".into()));
    }
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
    String::from_utf8(buf).map_err(|e| Failure::Protocol(e.to_string()))
}

fn read_reply(r: &mut impl BufRead, depth: usize) -> Result<Reply, Failure> {
    if depth > MAX_DEPTH {
        return Err(Failure::Protocol("reply nested too deep".into()));
    }
    let line = read_line(r)?;
    let mut chars = line.chars();
    let kind = chars.next();
    let rest = chars.as_str();
    let number = || {
        rest.parse::<i64>()
            .map_err(|_| Failure::Protocol(format!("bad length or integer {rest:?}")))
    };
    match kind {
        Some('+') => Ok(Reply::Status(rest.to_string())),
        Some('-') => Ok(Reply::Error(rest.to_string())),
        Some(':') => Ok(Reply::Int(number()?)),
        Some('$') => {
            let len = number()?;
            if len < 0 {
                return Ok(Reply::Bulk(None));
            }
            if len > MAX_BULK {
                return Err(Failure::Protocol(format!("a {len}-byte string in a reply")));
            }
            let mut buf = vec![0u8; usize::try_from(len).unwrap_or(0) + 2];
            r.read_exact(&mut buf).map_err(io_failure)?;
            buf.truncate(buf.len().saturating_sub(2));
            String::from_utf8(buf)
                .map(|s| Reply::Bulk(Some(s)))
                .map_err(|e| Failure::Protocol(e.to_string()))
        }
        Some('*') => {
            let len = number()?;
            if len < 0 {
                return Ok(Reply::Array(None));
            }
            let mut items = Vec::new();
            for _ in 0..len {
                items.push(read_reply(r, depth + 1)?);
            }
            Ok(Reply::Array(Some(items)))
        }
        _ => Err(Failure::Protocol(format!("unknown reply {line:?}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &str) -> Reply {
        let mut r = BufReader::new(bytes.as_bytes());
        read_reply(&mut r, 0).unwrap_or(Reply::Error("parse failed".into()))
    }

    #[test]
    fn replies_of_every_kind_are_read() {
        assert_eq!(parse("+OK\r\n"), Reply::Status("OK".into()));
        assert_eq!(parse("-ERR no\r\n"), Reply::Error("ERR no".into()));
        assert_eq!(parse(":42\r\n"), Reply::Int(42));
        assert_eq!(parse("$-1\r\n"), Reply::Bulk(None));
        // Lengths are bytes: "é" is two.
        assert_eq!(parse("$3\r\naé\r\n"), Reply::Bulk(Some("aé".into())));
        assert_eq!(
            parse("*2\r\n:1\r\n*1\r\n$2\r\nx\n\r\n"),
            Reply::Array(Some(vec![
                Reply::Int(1),
                Reply::Array(Some(vec![Reply::Bulk(Some("x\n".into()))]))
            ]))
        );
    }

    #[test]
    fn a_cut_reply_is_a_lost_connection_not_a_hang() {
        let mut r = BufReader::new("*2\r\n:1\r\n".as_bytes());
        assert!(matches!(read_reply(&mut r, 0), Err(Failure::Lost(_))));
    }
}
