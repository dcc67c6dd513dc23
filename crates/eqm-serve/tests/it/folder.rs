//! The folder: the listing, reading and writing files, and the path rule (`..`, absolute
//! paths and symbolic links out of the folder are 403).

use crate::{DECAY, Reply, bench};
use axum::http::StatusCode;
use serde_json::json;

/// Reads `path` through the API.
async fn check(bench: &crate::Bench, path: &str) -> Reply {
    bench.call("GET", &format!("/api/file?path={path}"), None).await
}

#[tokio::test(flavor = "multi_thread")]
async fn the_listing_has_every_model_file_below_the_folder() {
    let broken = "model Broken\n  Real x\nequation\nend Broken;\n";
    let bench = bench(&[
        ("decay.eqm", DECAY),
        (
            "sub/two.mo",
            "package P\n  model A\n    Real x = 1;\n  end A;\n  model B\n    Real y = 2;\n  end B;\nend P;\n",
        ),
        ("sub/broken.eqm", broken),
        (".hidden/c.eqm", DECAY),
        ("target/d.eqm", DECAY),
        ("node_modules/e.eqm", DECAY),
        ("notes.txt", "not a model"),
    ]);
    let listing = bench.call("GET", "/api/files", None).await;
    assert_eq!(listing.status, StatusCode::OK);
    let listing = listing.json();
    let files = listing["files"].as_array().expect("files");
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().expect("a path")).collect();
    assert_eq!(paths, ["decay.eqm", "sub/broken.eqm", "sub/two.mo"]);
    assert_eq!(files[0]["format"], "eqm");
    assert_eq!(files[0]["models"], json!(["Decay"]));
    assert_eq!(files[0]["error"], json!(null));
    assert_eq!(files[2]["format"], "modelica");
    assert_eq!(files[2]["models"], json!(["P.A", "P.B"]));
    // The broken file says where it is broken.
    let error = files[1]["error"].as_str().expect("an error");
    assert!(error.starts_with("sub/broken.eqm:2:9: "), "{error}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_file_is_read_and_written_below_the_folder() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let read = check(&bench, "decay.eqm").await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.json(), json!({ "path": "decay.eqm", "text": DECAY }));

    let text = "model New\n  Real x(start = 2, fixed = true);\nequation\n  der(x) = 1;\nend New;\n";
    let written = bench
        .call("PUT", "/api/file?path=new.eqm", Some(json!({ "text": text })))
        .await;
    assert_eq!(written.status, StatusCode::OK, "{}", written.text());
    assert_eq!(written.json(), json!({ "path": "new.eqm", "bytes": text.len() }));
    assert_eq!(
        std::fs::read_to_string(bench.dir.join("new.eqm")).expect("written"),
        text
    );
    // Overwritten in place, with no temporary file left behind.
    let written = bench
        .call("PUT", "/api/file?path=decay.eqm", Some(json!({ "text": text })))
        .await;
    assert_eq!(written.status, StatusCode::OK);
    assert_eq!(check(&bench, "decay.eqm").await.json()["text"], text);
    let mut names: Vec<String> = std::fs::read_dir(&bench.dir)
        .expect("the folder")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    names.sort();
    assert_eq!(names, ["decay.eqm", "new.eqm"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn paths_out_of_the_folder_are_forbidden() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    let outside = crate::temporary_dir("outside");
    std::fs::write(outside.join("secret.eqm"), "model Secret\nend Secret;\n").expect("written");
    std::os::unix::fs::symlink(outside.join("secret.eqm"), bench.dir.join("link.eqm")).expect("a link");
    std::os::unix::fs::symlink(&outside, bench.dir.join("away")).expect("a link");
    let absolute = outside.join("secret.eqm").display().to_string();
    for path in [
        "../secret.eqm",
        "sub/../../secret.eqm",
        absolute.as_str(),
        "link.eqm",
        "away/secret.eqm",
    ] {
        let reply = check(&bench, path).await;
        assert_eq!(reply.status, StatusCode::FORBIDDEN, "{path}: {}", reply.text());
        let put = bench
            .call("PUT", &format!("/api/file?path={path}"), Some(json!({ "text": "x" })))
            .await;
        assert_eq!(put.status, StatusCode::FORBIDDEN, "PUT {path}: {}", put.text());
        let checked = bench.call("POST", "/api/check", Some(json!({ "path": path }))).await;
        assert_eq!(
            checked.status,
            StatusCode::FORBIDDEN,
            "check {path}: {}",
            checked.text()
        );
    }
    // Nothing was written outside, and the links are not listed.
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.eqm")).expect("still there"),
        "model Secret\nend Secret;\n"
    );
    let listed = bench.call("GET", "/api/files", None).await.json();
    assert_eq!(listed["files"].as_array().map(Vec::len), Some(1));
    let _ = std::fs::remove_dir_all(&outside);
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_requests_about_files() {
    let bench = bench(&[("decay.eqm", DECAY)]);
    assert_eq!(check(&bench, "missing.eqm").await.status, StatusCode::NOT_FOUND);
    assert_eq!(check(&bench, "sub/missing.eqm").await.status, StatusCode::NOT_FOUND);
    assert_eq!(
        bench.call("GET", "/api/file", None).await.status,
        StatusCode::BAD_REQUEST
    );
    let extension = bench
        .call("PUT", "/api/file?path=notes.txt", Some(json!({ "text": "x" })))
        .await;
    assert_eq!(extension.status, StatusCode::BAD_REQUEST);
    assert!(!bench.dir.join("notes.txt").exists());
    let no_folder = bench
        .call("PUT", "/api/file?path=sub/new.eqm", Some(json!({ "text": "x" })))
        .await;
    assert_eq!(no_folder.status, StatusCode::NOT_FOUND);
    let not_json = bench
        .send(
            axum::http::Request::builder()
                .method("PUT")
                .uri("/api/file?path=a.eqm")
                .header("host", crate::BOUND)
                .header("authorization", format!("token {}", bench.app.token()))
                .body(axum::body::Body::from("{\"text\": "))
                .expect("a request"),
        )
        .await;
    assert_eq!(not_json.status, StatusCode::BAD_REQUEST);
    assert!(not_json.json()["error"].as_str().is_some());
    let missing_field = bench
        .call("PUT", "/api/file?path=a.eqm", Some(json!({ "txt": "x" })))
        .await;
    assert_eq!(missing_field.status, StatusCode::BAD_REQUEST);
    // Over 8 MB: 413, and nothing written.
    let large = "x".repeat(8 * 1024 * 1024 + 10);
    let too_large = bench
        .call("PUT", "/api/file?path=large.eqm", Some(json!({ "text": large })))
        .await;
    assert_eq!(too_large.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(too_large.json()["error"].as_str().is_some_and(|e| e.contains("8 MB")));
    assert!(!bench.dir.join("large.eqm").exists());
}
