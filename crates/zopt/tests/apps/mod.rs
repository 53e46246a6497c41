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
    normalizations(PATTERNS)
}

/// Normalizations from (pattern, replacement) pairs.
pub fn normalizations(patterns: &[(&str, &str)]) -> Vec<zopt::exec_diff::Normalize> {
    patterns
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
    let mut params = cgi_get_params(
        &format!("/usr/share/mediawiki/{script}"),
        &format!("/wiki/{script}"),
        &format!("/wiki/{script}?{query}"),
        query,
    );
    params.push(("MW_CONFIG_FILE".into(), settings.display().to_string()));
    params
}

/// The CGI variables a web server on 127.0.0.1 sets for a GET of the script
/// `script_filename`, which clients know as `script_name`, requested as `request_uri` with
/// the query string `query`.
pub fn cgi_get_params(
    script_filename: &str,
    script_name: &str,
    request_uri: &str,
    query: &str,
) -> Vec<(String, String)> {
    [
        ("REDIRECT_STATUS", "200"),
        ("GATEWAY_INTERFACE", "CGI/1.1"),
        ("SCRIPT_FILENAME", script_filename),
        ("SCRIPT_NAME", script_name),
        ("REQUEST_METHOD", "GET"),
        ("QUERY_STRING", query),
        ("REQUEST_URI", request_uri),
        ("SERVER_NAME", "127.0.0.1"),
        ("HTTP_HOST", "127.0.0.1"),
        ("SERVER_PORT", "80"),
        ("REMOTE_ADDR", "127.0.0.1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// A WordPress of the test's own (fixtures/apps/wordpress-site, on Debian's
/// /usr/share/wordpress and its themes), with content, on a MariaDB server started for it
/// on a Unix socket in a temporary directory (no network) and stopped when this is dropped.
pub struct Wordpress {
    /// The database's files, the socket, uploads, the mirror of WordPress that wp-admin
    /// runs from ([`Wordpress::abspath`]).
    pub dir: tempfile::TempDir,
    /// The directory of the site's entry points (index.php).
    pub site: PathBuf,
    server: std::process::Child,
}

/// The MariaDB server's socket, in [`Wordpress::dir`].
const MARIADB_SOCKET: &str = "mysql.sock";

impl Wordpress {
    /// Runs one of the site's command-line scripts (fixtures/apps/wordpress-site) with the
    /// site's environment.
    fn run_script(&self, script: &str) -> std::process::Output {
        Command::new("php")
            .arg(script)
            .current_dir(&self.site)
            .envs(self.env())
            .output()
            .unwrap_or_else(|e| panic!("running the site's {script}: {e}"))
    }

    /// The environment the site's PHP needs (its database socket, uploads directory).
    pub fn env(&self) -> Vec<(String, String)> {
        let uploads = self.dir.path().join("uploads");
        vec![
            ("ZOPT_WP_SOCKET".into(), self.socket().display().to_string()),
            ("ZOPT_WP_UPLOADS".into(), uploads.display().to_string()),
        ]
    }

    fn socket(&self) -> PathBuf {
        self.dir.path().join(MARIADB_SOCKET)
    }

    /// WordPress's directory as wp-admin sees it (ABSPATH, set by the site's wp-admin.php):
    /// a mirror of /usr/share/wordpress, every entry a symbolic link to Debian's, but for
    /// wp-config.php, which is the site's config.php. wp-admin/admin.php loads wp-load.php,
    /// which loads ABSPATH/wp-config.php, and Debian's reads /etc/wordpress; PHP resolves
    /// the links, so every script still runs as Debian's file.
    pub fn abspath(&self) -> PathBuf {
        self.dir.path().join("wordpress")
    }

    /// Logs the administrator in (fixtures/apps/wordpress-site/login.php): a new session
    /// of user 1, whose cookies and REST API nonce the requests of
    /// [`wordpress_admin_cgi_params`] and [`WordpressLogin::browser_params`] send.
    pub fn log_in(&self) -> WordpressLogin {
        let login = self.run_script("login.php");
        let stdout = String::from_utf8_lossy(&login.stdout);
        let lines: Vec<&str> = stdout.lines().collect();
        assert!(
            login.status.success() && lines.len() == 2 && lines[0].contains("wordpress_logged_in_"),
            "logging in to WordPress failed: {stdout}{}",
            String::from_utf8_lossy(&login.stderr)
        );
        WordpressLogin {
            cookie: lines[0].to_string(),
            rest_nonce: lines[1].to_string(),
        }
    }
}

/// The administrator's session in a browser, from [`Wordpress::log_in`].
pub struct WordpressLogin {
    /// The auth and logged-in cookies, as a `Cookie` header's value.
    pub cookie: String,
    /// A nonce of the `wp_rest` action: the REST API takes cookies only with one
    /// (`_wpnonce`), against cross-site requests.
    pub rest_nonce: String,
}

impl WordpressLogin {
    /// The CGI variables of a request from the administrator's browser: its cookies and a
    /// desktop browser's user agent (without one, WordPress turns the visual editors off).
    /// `wp-settings-1`, empty, is the cookie of the user's (empty) interface settings,
    /// which wp-admin otherwise sets on every page, dated now.
    pub fn browser_params(&self) -> Vec<(String, String)> {
        vec![
            (
                "HTTP_COOKIE".into(),
                format!("{}; wp-settings-1=", self.cookie),
            ),
            (
                "HTTP_USER_AGENT".into(),
                "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0".into(),
            ),
        ]
    }
}

impl Drop for Wordpress {
    fn drop(&mut self) {
        let _ = self.server.kill();
        let _ = self.server.wait();
    }
}

/// Starts MariaDB for a new WordPress, installs it (fixtures/apps/wordpress-site/install.php)
/// and returns it.
pub fn install_wordpress() -> Wordpress {
    // Both crates that include this module sit two levels below the workspace.
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    require_file("/usr/share/wordpress/wp-settings.php", "wordpress");
    require_file(
        "/usr/share/wordpress/wp-content/themes/twentytwentythree/theme.json",
        "wordpress-theme-twentytwentythree",
    );
    require_file(
        "/usr/share/wordpress/wp-content/themes/twentytwentyone/functions.php",
        "wordpress-theme-twentytwentyone",
    );
    require_file("/usr/sbin/mariadbd", "mariadb-server");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("db");
    std::fs::create_dir(dir.path().join("uploads")).unwrap();
    // mariadbd refuses to run as root unless told to: whoever runs the test owns it.
    let user = Command::new("id").arg("-un").output().unwrap();
    let user = String::from_utf8_lossy(&user.stdout).trim().to_string();
    let init = Command::new("mariadb-install-db")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg("--auth-root-authentication-method=normal")
        .arg("--skip-test-db")
        .arg(format!("--user={user}"))
        .output()
        .expect("running mariadb-install-db (apt-get install mariadb-server)");
    assert!(
        init.status.success(),
        "mariadb-install-db failed: {}{}",
        String::from_utf8_lossy(&init.stdout),
        String::from_utf8_lossy(&init.stderr)
    );
    let socket = dir.path().join(MARIADB_SOCKET);
    let server = Command::new("/usr/sbin/mariadbd")
        .arg("--no-defaults")
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--socket={}", socket.display()))
        .arg("--skip-networking")
        .arg(format!(
            "--pid-file={}",
            dir.path().join("mariadb.pid").display()
        ))
        .arg(format!(
            "--log-error={}",
            dir.path().join("mariadb.log").display()
        ))
        .arg(format!("--user={user}"))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("starting mariadbd");
    let wordpress = Wordpress {
        site: workspace.join("fixtures/apps/wordpress-site"),
        dir,
        server,
    };
    // The WordPress that wp-admin runs from.
    let abspath = wordpress.abspath();
    std::fs::create_dir(&abspath).unwrap();
    for entry in std::fs::read_dir("/usr/share/wordpress").unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "wp-config.php" {
            std::os::unix::fs::symlink(entry.path(), abspath.join(entry.file_name())).unwrap();
        }
    }
    std::os::unix::fs::symlink(
        wordpress.site.join("config.php"),
        abspath.join("wp-config.php"),
    )
    .unwrap();
    // Ready once it takes a statement; a server that died says why in its log.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let created = Command::new("mariadb")
            .arg("--no-defaults")
            .arg(format!("--socket={}", socket.display()))
            .args(["-u", "root", "-e", "CREATE DATABASE wordpress"])
            .output()
            .expect("running the mariadb client");
        if created.status.success() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "MariaDB did not start within 60 s: {}\n{}",
            String::from_utf8_lossy(&created.stderr),
            std::fs::read_to_string(wordpress.dir.path().join("mariadb.log")).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let install = wordpress.run_script("install.php");
    assert!(
        install.status.success() && install.stdout.ends_with(b"installed\n"),
        "WordPress's installation failed (it needs php8.2-mysql): {}{}",
        String::from_utf8_lossy(&install.stdout),
        String::from_utf8_lossy(&install.stderr)
    );
    wordpress
}

/// Requests of the WordPress site, (theme or "" for the installed one, query string): the
/// home page, posts with blocks and classic content, comments, pages, archives by category
/// and tag, search, a missing post, the RSS feed, the REST API and the sitemap (few: each
/// runs under every mode, within CI's 40 minutes).
pub const WORDPRESS_REQUESTS: &[(&str, &str)] = &[
    ("", ""),
    ("", "p=4"),
    ("", "p=5"),
    ("", "page_id=13"),
    ("", "cat=2"),
    ("", "tag=ssa"),
    ("", "s=post"),
    ("", "p=999"),
    ("", "feed=rss2"),
    ("", "rest_route=/wp/v2/posts"),
    ("", "rest_route=/wp/v2/posts/4&_embed=1"),
    ("", "sitemap=index"),
    ("twentytwentyone", ""),
    ("twentytwentyone", "p=4"),
    ("twentytwentyone", "page_id=12"),
];

/// The CGI variables a web server sets for a GET of the WordPress site with `query`, served
/// with `theme` ("" for the installed one).
pub fn wordpress_cgi_params(wp: &Wordpress, theme: &str, query: &str) -> Vec<(String, String)> {
    // As a server with pretty permalinks off shows them: WordPress redirects
    // /index.php?... to its canonical /?...
    let mut params = cgi_get_params(
        &wp.site.join("index.php").display().to_string(),
        "/index.php",
        &format!("/?{query}"),
        query,
    );
    params.extend(wp.env());
    if !theme.is_empty() {
        params.push(("ZOPT_WP_THEME".into(), theme.into()));
    }
    params
}

/// Requests of wp-admin as the logged-in administrator, (script in wp-admin, query string):
/// the dashboard, the lists of posts and comments, the block editor on a post, plugins,
/// general settings and the user's profile.
pub const WORDPRESS_ADMIN_REQUESTS: &[(&str, &str)] = &[
    ("index.php", ""),
    ("edit.php", ""),
    ("post.php", "post=4&action=edit"),
    ("edit-comments.php", ""),
    ("plugins.php", ""),
    ("options-general.php", ""),
    ("profile.php", ""),
];

/// The CGI variables a web server sets for a GET of /wp-admin/`script` with `query` from
/// the browser of `login`: the site's wp-admin.php runs WordPress's wp-admin/`script`.
pub fn wordpress_admin_cgi_params(
    wp: &Wordpress,
    login: &WordpressLogin,
    script: &str,
    query: &str,
) -> Vec<(String, String)> {
    let script_name = format!("/wp-admin/{script}");
    let request_uri = if query.is_empty() {
        script_name.clone()
    } else {
        format!("{script_name}?{query}")
    };
    let mut params = cgi_get_params(
        &wp.site.join("wp-admin.php").display().to_string(),
        &script_name,
        &request_uri,
        query,
    );
    params.extend(wp.env());
    params.push((
        "ZOPT_WP_ABSPATH".into(),
        format!("{}/", wp.abspath().display()),
    ));
    params.extend(login.browser_params());
    params
}

/// What changes from one request of wp-admin to the next, normalized away: the current
/// time (in the user's settings for scripts, in the comment list's form, in the post lock
/// the block editor takes, and the examples of date and time formats on the general
/// settings) and the strong password the profile suggests (from PHP's CSPRNG).
pub fn wordpress_admin_normalize() -> Vec<zopt::exec_diff::Normalize> {
    const PATTERNS: &[(&str, &str)] = &[
        (
            r#"(var userSettings = \{[^}]*"time":")[0-9]+""#,
            r#"${1}-""#,
        ),
        (r#"(name="pagegen_timestamp" value=")[^"]*""#, r#"${1}-""#),
        (r#""activePostLock":"[0-9]+:"#, r#""activePostLock":"-:"#),
        (
            r"Universal time is <code>[^<]*</code>",
            "Universal time is <code>-</code>",
        ),
        (
            r#"(class="date-time-text format-i18n">|class="example">)[^<]*"#,
            "${1}-",
        ),
        (r#"data-pw="[^"]*""#, r#"data-pw="-""#),
    ];
    normalizations(PATTERNS)
}
