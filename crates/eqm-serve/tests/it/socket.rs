//! One server over a real socket: bound at a free port, answering with the token and refusing
//! without it, stopping when told.

use crate::DECAY;
use eqm_serve::{Config, Server};

/// `GET url` with `token` (if any): the status and the body.
fn check(url: &str, token: Option<&str>) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder().http_status_as_error(false).build().into();
    let mut request = agent.get(url);
    if let Some(token) = token {
        request = request.header("Authorization", &format!("token {token}"));
    }
    let mut response = request.call().expect("the server answers");
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().expect("a text body"))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_on_a_free_port_answers_and_stops() {
    let dir = crate::temporary_dir("socket");
    std::fs::write(dir.join("decay.eqm"), DECAY).expect("written");
    let mut config = Config::new(&dir, eqm_serve::plain_sessions());
    config.port = Some(0);
    let server = Server::bind(config).await.expect("bound");
    let address = server.address();
    assert!(address.ip().is_loopback());
    assert_ne!(address.port(), 0);
    let url = server.url();
    assert_eq!(
        url,
        format!("http://127.0.0.1:{}/?token={}", address.port(), server.token())
    );
    let token = server.token().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let serving = tokio::spawn(server.serve(async move {
        let _ = stopped.await;
    }));
    let base = format!("http://{address}");
    let answers = tokio::task::spawn_blocking(move || {
        (
            check(&format!("{base}/api/files"), Some(&token)),
            check(&format!("{base}/api/files"), None),
        )
    })
    .await
    .expect("the client's task");
    assert_eq!(answers.0.0, 200);
    assert!(answers.0.1.contains("\"decay.eqm\""), "{}", answers.0.1);
    assert_eq!(answers.1.0, 401);
    let _ = stop.send(());
    serving.await.expect("the server's task").expect("it stopped cleanly");
    // A port in use is an error that says so.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let mut config = Config::new(&dir, eqm_serve::plain_sessions());
    config.port = Some(taken.local_addr().expect("its address").port());
    let refused = Server::bind(config).await.err().expect("the port is taken");
    assert!(refused.contains("cannot listen"), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
