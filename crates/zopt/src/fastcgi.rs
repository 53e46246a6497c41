//! A FastCGI client (the responder role of the FastCGI 1.0 specification), enough to send
//! one request to a running php-fpm and read its answer: what `zopt cache warm --fastcgi`
//! uses to compile files inside the server whose cache it fills, with that server's own
//! configuration (the way cachetool drives OPcache).
//!
//! One connection per request, no multiplexing (php-fpm supports neither), with a time
//! limit on every read and write so that a stuck server is an error, not a hang.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

const VERSION_1: u8 = 1;
const BEGIN_REQUEST: u8 = 1;
const END_REQUEST: u8 = 3;
const PARAMS: u8 = 4;
const STDIN: u8 = 5;
const STDOUT: u8 = 6;
const STDERR: u8 = 7;
const RESPONDER: u16 = 1;
const REQUEST_ID: u16 = 1;
/// The largest content of one record.
const MAX_CONTENT: usize = 0xFFFF;

/// Where the server listens: `unix:/path`, a path to a socket, or `host:port`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Address {
    Unix(PathBuf),
    Tcp(String),
}

impl std::str::FromStr for Address {
    type Err = String;

    fn from_str(s: &str) -> Result<Address, String> {
        if let Some(path) = s.strip_prefix("unix:") {
            return Ok(Address::Unix(PathBuf::from(path)));
        }
        if s.starts_with('/') || s.starts_with('.') {
            return Ok(Address::Unix(PathBuf::from(s)));
        }
        match s.rsplit_once(':') {
            Some((host, port)) if !host.is_empty() && port.parse::<u16>().is_ok() => {
                Ok(Address::Tcp(s.to_string()))
            }
            _ => Err(format!(
                "{s:?}: give a unix socket (unix:/run/php/php8.2-fpm.sock, or its path) or host:port"
            )),
        }
    }
}

impl std::fmt::Display for Address {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Address::Unix(path) => write!(f, "unix:{}", path.display()),
            Address::Tcp(addr) => f.write_str(addr),
        }
    }
}

/// What the server answered.
#[derive(Debug, Default)]
pub struct Response {
    /// The CGI header lines (`Status: 404 Not Found`, `Content-type: ...`), without the
    /// blank line that ends them.
    pub headers: Vec<String>,
    pub body: Vec<u8>,
    /// What the application wrote to FastCGI's stderr stream.
    pub stderr: Vec<u8>,
    /// The application's exit status from the END_REQUEST record.
    pub app_status: u32,
}

impl Response {
    /// The HTTP status the `Status` header gives (200 without one, as for CGI).
    pub fn status(&self) -> u16 {
        self.headers
            .iter()
            .find_map(|h| {
                let (name, value) = h.split_once(':')?;
                name.eq_ignore_ascii_case("status")
                    .then(|| value.split_whitespace().next()?.parse().ok())?
            })
            .unwrap_or(200)
    }
}

trait Stream: Read + Write {}
impl<T: Read + Write> Stream for T {}

fn connect(address: &Address, timeout: Duration) -> Result<Box<dyn Stream>> {
    Ok(match address {
        Address::Unix(path) => {
            let s = UnixStream::connect(path)
                .with_context(|| format!("cannot connect to {address}"))?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            Box::new(s)
        }
        Address::Tcp(addr) => {
            let s = TcpStream::connect(addr.as_str())
                .with_context(|| format!("cannot connect to {address}"))?;
            s.set_read_timeout(Some(timeout))?;
            s.set_write_timeout(Some(timeout))?;
            Box::new(s)
        }
    })
}

fn record(out: &mut Vec<u8>, kind: u8, content: &[u8]) {
    debug_assert!(content.len() <= MAX_CONTENT);
    let padding = (8 - content.len() % 8) % 8;
    out.extend_from_slice(&[VERSION_1, kind]);
    out.extend_from_slice(&REQUEST_ID.to_be_bytes());
    out.extend_from_slice(&(content.len() as u16).to_be_bytes());
    out.extend_from_slice(&[padding as u8, 0]);
    out.extend_from_slice(content);
    out.extend(std::iter::repeat_n(0, padding));
}

/// A stream (PARAMS or STDIN): its content in records of at most [`MAX_CONTENT`] bytes,
/// then the empty record that ends it.
fn stream(out: &mut Vec<u8>, kind: u8, content: &[u8]) {
    for chunk in content.chunks(MAX_CONTENT) {
        record(out, kind, chunk);
    }
    record(out, kind, &[]);
}

fn name_value_length(out: &mut Vec<u8>, len: usize) -> Result<()> {
    if len < 0x80 {
        out.push(len as u8);
    } else if len <= 0x7FFF_FFFF {
        out.extend_from_slice(&(len as u32 | 0x8000_0000).to_be_bytes());
    } else {
        bail!("a FastCGI parameter of {len} bytes is too long");
    }
    Ok(())
}

/// Sends one request (its CGI parameters and body) and reads the whole answer.
pub fn request(
    address: &Address,
    params: &[(&str, &str)],
    body: &[u8],
    timeout: Duration,
) -> Result<Response> {
    let mut out = Vec::with_capacity(256 + body.len());
    let mut begin = [0u8; 8];
    begin[..2].copy_from_slice(&RESPONDER.to_be_bytes());
    record(&mut out, BEGIN_REQUEST, &begin);
    let mut pairs = Vec::new();
    for (name, value) in params {
        name_value_length(&mut pairs, name.len())?;
        name_value_length(&mut pairs, value.len())?;
        pairs.extend_from_slice(name.as_bytes());
        pairs.extend_from_slice(value.as_bytes());
    }
    stream(&mut out, PARAMS, &pairs);
    stream(&mut out, STDIN, body);

    let mut conn = connect(address, timeout)?;
    conn.write_all(&out)
        .with_context(|| format!("cannot send the request to {address}"))?;
    conn.flush()?;

    let mut stdout = Vec::new();
    let mut response = Response::default();
    loop {
        let mut header = [0u8; 8];
        conn.read_exact(&mut header).with_context(|| {
            format!("{address} closed the connection before ending the request")
        })?;
        if header[0] != VERSION_1 {
            bail!(
                "{address} does not speak FastCGI (a record of version {})",
                header[0]
            );
        }
        let len = u16::from_be_bytes([header[4], header[5]]) as usize;
        let mut content = vec![0u8; len + header[6] as usize];
        conn.read_exact(&mut content)
            .with_context(|| format!("{address} sent a truncated record"))?;
        content.truncate(len);
        match header[1] {
            STDOUT => stdout.extend_from_slice(&content),
            STDERR => response.stderr.extend_from_slice(&content),
            END_REQUEST => {
                if content.len() < 5 {
                    bail!("{address} sent a short END_REQUEST record");
                }
                response.app_status =
                    u32::from_be_bytes([content[0], content[1], content[2], content[3]]);
                match content[4] {
                    0 => break,
                    1 => bail!("{address} refused the request: it cannot multiplex connections"),
                    2 => bail!("{address} refused the request: overloaded"),
                    3 => bail!("{address} refused the request: unknown role"),
                    s => bail!("{address} ended the request with protocol status {s}"),
                }
            }
            _ => {} // records of other requests or types: none expected, ignored
        }
    }
    // CGI headers, then a blank line, then the body.
    let split = stdout
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| (i, i + 4))
        .or_else(|| {
            stdout
                .windows(2)
                .position(|w| w == b"\n\n")
                .map(|i| (i, i + 2))
        });
    match split {
        Some((end, body)) => {
            response.headers = String::from_utf8_lossy(&stdout[..end])
                .lines()
                .map(str::to_string)
                .collect();
            response.body = stdout[body..].to_vec();
        }
        None => response.body = stdout,
    }
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert_eq!(
            "unix:/run/php/php8.2-fpm.sock".parse(),
            Ok(Address::Unix("/run/php/php8.2-fpm.sock".into()))
        );
        assert_eq!(
            "/tmp/fpm.sock".parse(),
            Ok(Address::Unix("/tmp/fpm.sock".into()))
        );
        assert_eq!(
            "127.0.0.1:9000".parse(),
            Ok(Address::Tcp("127.0.0.1:9000".into()))
        );
        assert!("fpm".parse::<Address>().is_err());
        assert!("host:port".parse::<Address>().is_err());
    }

    #[test]
    fn records_are_padded_and_streams_ended() {
        let mut out = Vec::new();
        stream(&mut out, STDIN, b"abc");
        assert_eq!(
            out,
            [
                1, STDIN, 0, 1, 0, 3, 5, 0, b'a', b'b', b'c', 0, 0, 0, 0, 0, // content
                1, STDIN, 0, 1, 0, 0, 0, 0, // end of the stream
            ]
        );
        let mut long = Vec::new();
        name_value_length(&mut long, 300).unwrap();
        assert_eq!(long, [0x80, 0, 1, 44]);
    }
}
