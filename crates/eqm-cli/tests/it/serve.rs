//! `eqm serve`: the first line is the page's address with the token, the server answers a
//! request with the token over its socket, SIGINT stops it with exit 0, and usage errors exit 2.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};

/// `GET path` over a plain socket with the token: the status line and the body.
fn check(address: &str, path: &str, token: &str) -> (String, String) {
    let mut stream = TcpStream::connect(address).expect("the server accepts");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: token {token}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).expect("the request is sent");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).expect("the answer is read");
    let status = answer.lines().next().unwrap_or_default().to_string();
    let body = answer
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

/// The server under test, killed if the test fails before it stopped it.
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

#[test]
fn serve_prints_its_address_answers_and_stops_on_sigint() {
    let child = Command::new(env!("CARGO_BIN_EXE_eqm"))
        .args(["serve", "examples", "--port", "0"])
        .current_dir(crate::REPO)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("eqm serve starts");
    let mut child = Serving(child);
    let mut first = String::new();
    let stdout = child.0.stdout.take().expect("its output");
    BufReader::new(stdout).read_line(&mut first).expect("the first line");
    let url = first
        .trim_end()
        .strip_prefix("EQM workbench: http://")
        .unwrap_or_else(|| panic!("{first}"))
        .to_string();
    let (address, token) = url.split_once("/?token=").expect("the token in the address");
    assert!(address.starts_with("127.0.0.1:"), "{address}");
    assert_eq!(token.len(), 32);
    let (status, body) = check(address, "/api/status", token);
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(body.contains("\"root\":\"examples\""), "{body}");
    let (status, _) = check(address, "/api/status", "0000");
    assert_eq!(status, "HTTP/1.1 401 Unauthorized");
    let interrupted = Command::new("kill")
        .args(["-INT", &child.0.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(interrupted.success());
    let status = child.0.wait().expect("eqm serve ends");
    assert_eq!(status.code(), Some(0));
}

#[test]
fn serve_usage_errors_exit_2() {
    let (code, _, stderr) = crate::cli::eqm(&["serve", "no/such/folder"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no/such/folder is not a folder"), "{stderr}");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = taken.local_addr().expect("its address").port().to_string();
    let (code, stdout, stderr) = crate::cli::eqm(&["serve", "examples", "--port", &port]);
    assert_eq!(code, 2);
    assert!(stdout.is_empty(), "{stdout}");
    assert!(stderr.contains("cannot listen on 127.0.0.1"), "{stderr}");
}
