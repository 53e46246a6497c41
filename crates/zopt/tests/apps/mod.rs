//! Real applications from Debian for the tests of zopt and of its extension: finding their
//! files (a missing package fails the test, naming it) and a MediaWiki of the test's own.
//! Included by path from crates/zopt/tests and crates/zopt-php/tests.

#![allow(dead_code)]

use std::path::PathBuf;
use std::process::Command;

/// A Debian package's file the real-application test reads; fails naming the package.
pub fn require_file(path: &str, package: &str) -> PathBuf {
    let path = PathBuf::from(path);
    assert!(
        path.is_file(),
        "this test needs {} (apt-get install --no-install-recommends {package})",
        path.display()
    );
    path
}

/// A MediaWiki of its own, on SQLite in a temporary directory (the system's wiki is left
/// alone): MediaWiki reads the LocalSettings.php returned from MW_CONFIG_FILE.
pub fn install_mediawiki() -> (tempfile::TempDir, PathBuf) {
    require_file("/usr/share/mediawiki/maintenance/install.php", "mediawiki");
    let wiki = tempfile::tempdir().unwrap();
    let db = wiki.path().join("db");
    std::fs::create_dir(&db).unwrap();
    let install = Command::new("php")
        .arg("maintenance/install.php")
        .arg("--dbtype=sqlite")
        .arg(format!("--dbpath={}", db.display()))
        .arg("--dbname=wiki")
        .arg("--server=http://127.0.0.1")
        .arg("--scriptpath=/wiki")
        .arg(format!("--confpath={}", wiki.path().display()))
        .arg("--pass=zopt-admin-password")
        .args(["ZoptWiki", "Admin"])
        .current_dir("/usr/share/mediawiki")
        .output()
        .expect("running MediaWiki's installer");
    assert!(
        install.status.success(),
        "MediaWiki's installer failed (it needs php8.2-sqlite3): {}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    let settings = wiki.path().join("LocalSettings.php");
    // The parser's limit report says how long parsing took.
    let mut text = std::fs::read_to_string(&settings).unwrap();
    text.push_str("\n$wgEnableParserLimitReporting = false;\n");
    std::fs::write(&settings, text).unwrap();
    (wiki, settings)
}

/// What changes from one MediaWiki request to the next (request ids, response times, the
/// current time in headers, forms and dates), normalized away.
pub fn mediawiki_normalize() -> Vec<zopt::exec_diff::Normalize> {
    const PATTERNS: &[(&str, &str)] = &[
        (
            r"(?m)^(X-Request-Id|Expires|Last-Modified|ETag|Content-Length): [^\r\n]*",
            "$1: -",
        ),
        (r#""wgRequestId":"[0-9a-f]*""#, r#""wgRequestId":"-""#),
        (
            r#""wgBackendResponseTime":[0-9]+"#,
            r#""wgBackendResponseTime":0"#,
        ),
        (r#""time":"[0-9TZ:-]+""#, r#""time":"-""#),
        (r"\b2[0-9]{13}\b", "TIMESTAMP"),
        (
            r"[0-9]{2}:[0-9]{2}, [0-9]{1,2} [A-Z][a-z]+ [0-9]{4}",
            "DATE",
        ),
        // The same, URL-encoded.
        (
            r"[0-9]{2}%3A[0-9]{2}%2C\+[0-9]{1,2}\+[A-Z][a-z]+\+[0-9]{4}",
            "DATE",
        ),
    ];
    PATTERNS
        .iter()
        .map(|&(pattern, replacement)| zopt::exec_diff::Normalize {
            pattern: pattern.into(),
            replacement: replacement.into(),
        })
        .collect()
}

/// Requests of MediaWiki's web entry points, (script, query string): page views, the edit
/// form, history, special pages, a missing page, the API and ResourceLoader.
pub const MEDIAWIKI_REQUESTS: &[(&str, &str)] = &[
    ("index.php", "title=Main_Page"),
    ("index.php", "title=Main_Page&action=edit"),
    ("index.php", "title=Main_Page&action=history"),
    ("index.php", "title=Special:Version"),
    (
        "index.php",
        "title=Special:RecentChanges&days=3650&limit=50",
    ),
    ("index.php", "title=Special:Search&search=main&fulltext=1"),
    ("index.php", "title=No_such_page"),
    (
        "api.php",
        "action=query&meta=siteinfo&siprop=general|namespaces|magicwords&format=json",
    ),
    ("api.php", "action=parse&page=Main_Page&format=json"),
    ("load.php", "modules=startup&only=scripts&skin=vector"),
    (
        "load.php",
        "modules=skins.vector.styles.legacy&only=styles&skin=vector",
    ),
];

/// The CGI variables a web server sets for a GET of MediaWiki's `script` (index.php,
/// api.php, ...) with `query`, with the wiki's configuration.
pub fn mediawiki_cgi_params(
    settings: &std::path::Path,
    script: &str,
    query: &str,
) -> Vec<(String, String)> {
    [
        ("MW_CONFIG_FILE", settings.display().to_string()),
        ("REDIRECT_STATUS", "200".into()),
        ("GATEWAY_INTERFACE", "CGI/1.1".into()),
        ("SCRIPT_FILENAME", format!("/usr/share/mediawiki/{script}")),
        ("SCRIPT_NAME", format!("/wiki/{script}")),
        ("REQUEST_METHOD", "GET".into()),
        ("QUERY_STRING", query.into()),
        ("REQUEST_URI", format!("/wiki/{script}?{query}")),
        ("SERVER_NAME", "127.0.0.1".into()),
        ("SERVER_PORT", "80".into()),
        ("REMOTE_ADDR", "127.0.0.1".into()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}
