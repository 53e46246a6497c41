//! Differential execution against the real PHP 8.2: every fixture program, and real programs
//! from Debian (composer, phpunit), must print the same stdout and exit with the same status
//! under (a) OPcache off, (b) OPcache's optimizer, (c) zopt's round trip, (d) zopt's
//! optimizer and (e) zopt's opcode cache, warm: served without calling PHP's compiler once,
//! every loaded script captured again and compared with its entry. Uses the library behind
//! `zopt exec-diff`.
//!
//! Needs `php` 8.2 with OPcache, and for the real programs Debian's `composer` and `phpunit`,
//! DokuWiki, MediaWiki, Roundcube, WordPress with its two themes and `mariadb-server`,
//! phpMyAdmin, `php-laravel-framework`, `smarty4`, Horde's libraries, `php-faker`,
//! `php-sabre-vobject`, `php-easyrdf`, `php-json-schema`, `php-doctrine-orm`,
//! `php-codesniffer` and `php8.2-cgi`
//! (as .ci/run installs them): the tests fail with a message naming the missing package, they never skip. The
//! extension is built here (`cargo build -p zopt-php`, a no-op when fresh).

mod apps;
mod common;

use apps::{install_mediawiki, install_wordpress, require_file};
use common::{extension, workspace_root};

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use zopt::corpus::php_files;
use zopt::exec_diff::{self, Config, Manifest, Mode, PhpIni, Program, Report};

/// Fixtures whose output legitimately differs with OPcache enabled.
///
/// - oop_extends_later.php: with OPcache, classes whose parent is declared later in the file
///   are bound early (delayed early binding), so `class_exists('Child')` at the top is true:
///   PHP's own OPcache behaviour in (b) as much as in (c), (d) and (e), not something zopt
///   does (zopt's cache loads scripts as OPcache does).
const OPCACHE_DEPENDENT: &[&str] = &["oop_extends_later.php"];

/// Fixtures on which PHP 8.2's optimizer is wrong (fixtures/README.md): (b) differs from
/// (a), and zopt's modes must not.
const PHP_OPTIMIZER_BUGS: &[&str] = &[
    "fz_sccp_unpack_partial_array.php",
    "fz_block_pass_nan_negation.php",
    "fz_block_pass_merged_echos.php",
    "fz_dce_float_key_deprecation.php",
    "fz_dfa_signed_zero_addition.php",
    "fz_dfa_narrowed_long_handlers.php",
    "fz_sccp_signed_zero_phi.php",
    "fz_sccp_signed_zero_array_phi.php",
    "fz_sccp_float_to_string.php",
    "opt_pass1_match_error_free.php",
    "pt_dfa_decremented_null.php",
    "pt_compound_concat_converted.php",
];

fn require_tool(name: &str, install: &str) {
    let found = Command::new(name).arg("--version").output();
    match found {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "`{name} --version` failed ({}): {}; install it with `{install}`",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => panic!("this test needs `{name}` on PATH ({e}); install it with `{install}`"),
    }
}

fn config() -> Config {
    let out = Command::new("php").arg("-v").output().unwrap_or_else(|e| {
        panic!("these tests need PHP 8.2 on PATH (apt-get install php8.2-cli php8.2-opcache): {e}")
    });
    let version = String::from_utf8_lossy(&out.stdout);
    assert!(
        version.starts_with("PHP 8.2."),
        "these tests need PHP 8.2, found: {version}"
    );
    Config {
        php: PathBuf::from("php"),
        extension: extension().to_path_buf(),
        optimization_level: 0x7FFE_BFFF,
        timeout: Duration::from_secs(120),
        jobs: 0,
        jit: None,
    }
}

/// Fails unless every run finished and every mismatch is PHP's own OPcache behaviour on a
/// known program.
/// Every mode prints what (a) prints, but for the listed fixtures: under (b) where
/// OPcache's optimizer is wrong (`php_bugs`), and under every mode where OPcache itself
/// changes the run (`opcache_dependent`), which the round trip (c), optimizing nothing,
/// then shows too.
fn assert_identical(report: &Report, opcache_dependent: &[&str], php_bugs: &[&str]) {
    report.print();
    assert!(report.errors.is_empty(), "errors: {:#?}", report.errors);
    assert!(
        report.timeouts.is_empty(),
        "timeouts: {:#?}",
        report.timeouts
    );
    let listed =
        |names: &[&str], file: &str| names.iter().any(|name| file.ends_with(&format!("/{name}")));
    for m in &report.mismatches {
        let roundtrip_differs = report
            .mismatches
            .iter()
            .any(|r| r.file == m.file && r.mode == Mode::Roundtrip && r.same_as_opcache);
        let explained = match m.mode {
            Mode::Opcache => listed(opcache_dependent, &m.file) || listed(php_bugs, &m.file),
            _ => listed(opcache_dependent, &m.file) && m.same_as_opcache && roundtrip_differs,
        };
        assert!(
            explained,
            "{} differs under {}: {}",
            m.file, m.mode, m.first_diff
        );
    }
}

#[test]
fn every_fixture_runs_identically_under_every_mode() {
    let config = config();
    let files = php_files(&[workspace_root().join("fixtures/php")]).unwrap();
    assert!(files.len() >= 150, "only {} fixture programs", files.len());
    let programs: Vec<Program> = files
        .iter()
        .map(|f| Program::file(&f.path, f.path.display().to_string(), PhpIni::None).unwrap())
        .collect();
    let report = exec_diff::run(&config, &programs, false);
    assert_eq!(report.programs, programs.len());
    assert_identical(&report, OPCACHE_DEPENDENT, PHP_OPTIMIZER_BUGS);
    assert!(
        report.identical + OPCACHE_DEPENDENT.len() + PHP_OPTIMIZER_BUGS.len() >= report.programs,
        "{} of {} identical",
        report.identical,
        report.programs
    );
    // Each listed PHP bug still shows under OPcache (else its entry is stale), and zopt's
    // modes print what PHP without OPcache prints there.
    for name in PHP_OPTIMIZER_BUGS {
        let under = |mode: Mode| {
            report
                .mismatches
                .iter()
                .any(|m| m.file.ends_with(&format!("/{name}")) && m.mode == mode)
        };
        assert!(
            under(Mode::Opcache),
            "{name}: OPcache's output is right now"
        );
        for mode in [Mode::Roundtrip, Mode::Optimize, Mode::Cache] {
            assert!(!under(mode), "{name} differs under {mode}");
        }
    }
    // The exec_ programs are self-checking: they must also have passed under (a).
    for f in files.iter().filter(|f| {
        f.path
            .file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("exec_"))
    }) {
        let p = Program::file(&f.path, String::new(), PhpIni::None).unwrap();
        let out = config.run(&p, Mode::Off).unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status, Some(0), "{}: {stdout}", f.path.display());
        assert!(
            stdout.ends_with("all ok\n"),
            "{}: {stdout}",
            f.path.display()
        );
    }
}

/// The fixtures again with OPcache's JIT compiling what OPcache, the round trip and zopt's
/// optimizer hand to PHP (tracing JIT, and function JIT): the JIT reads the op_arrays zopt
/// wrote back, their types and their handlers, so they must be what it expects.
#[test]
fn every_fixture_runs_identically_under_the_jit() {
    let files = php_files(&[workspace_root().join("fixtures/php")]).unwrap();
    let programs: Vec<Program> = files
        .iter()
        .map(|f| Program::file(&f.path, f.path.display().to_string(), PhpIni::None).unwrap())
        .collect();
    // PHP 8.2's DFA pass leaves a jump table entry past the end of the op_array
    // (fixtures/README.md, `dfa-dangling-jump-table`): without the JIT the interpreter
    // happens to print the right thing, the JIT's code does not.
    let php_bugs: Vec<&str> = PHP_OPTIMIZER_BUGS
        .iter()
        .copied()
        .chain(["fz_dfa_dangling_jump_table.php"])
        .collect();
    for jit in ["tracing", "function"] {
        let config = Config {
            jit: Some(jit.into()),
            ..config()
        };
        let mut report = exec_diff::run(&config, &programs, false);
        assert_eq!(report.programs, programs.len());
        // The round trip hands PHP its own unoptimized op_arrays: where it differs from
        // (a), it must print exactly what OPcache at level 0 under the same JIT prints (PHP's
        // JIT on unoptimized code: opt_sccp_arrays under the function JIT in 8.2.36).
        let level_0 = Config {
            optimization_level: 0,
            ..config.clone()
        };
        report.mismatches.retain(|m| {
            if m.mode != Mode::Roundtrip || OPCACHE_DEPENDENT.iter().any(|n| m.file.ends_with(n)) {
                return true;
            }
            let p = programs.iter().find(|p| p.name == m.file).unwrap();
            let ours = config.run(p, Mode::Roundtrip).unwrap();
            let php = level_0.run(p, Mode::Opcache).unwrap();
            assert_eq!(
                (String::from_utf8_lossy(&ours.stdout), ours.status),
                (String::from_utf8_lossy(&php.stdout), php.status),
                "{} under the {jit} JIT: the round trip differs from (a) ({}) and from \
                 OPcache at level 0",
                m.file,
                m.first_diff
            );
            false
        });
        assert_identical(&report, OPCACHE_DEPENDENT, &php_bugs);
    }
}

#[test]
fn composer_and_phpunit_run_identically_under_every_mode() {
    require_tool("composer", "apt-get install composer");
    require_tool("phpunit", "apt-get install phpunit");
    let config = config();
    let programs = Manifest::load(&workspace_root().join("fixtures/projects/exec-diff.json"))
        .expect("loading the manifest");
    assert!(programs.iter().any(|p| p.name.starts_with("composer show")));
    assert!(programs.iter().any(|p| p.name.starts_with("phpunit")));
    assert_every_mode_identical(&config, &programs, false);

    // The runs did real work: composer found the package, phpunit ran the suite.
    let show = programs.iter().find(|p| p.name == "composer show").unwrap();
    let out = config.run(show, Mode::Optimize).unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("zopt/greeter 1.2.3"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let unit = programs.iter().find(|p| p.name == "phpunit").unwrap();
    let out = config.run(unit, Mode::Roundtrip).unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Tests: 11, Assertions: 17, Skipped: 1."),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn mismatches_are_reported_with_the_first_differing_line() {
    // A program whose output depends on OPcache being enabled shows up as a mismatch of (b),
    // and of (c)/(d) flagged as OPcache's own behaviour.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("probe.php");
    std::fs::write(
        &file,
        "<?php\necho \"same\\n\";\necho (int) (function_exists('opcache_get_status') && opcache_get_status(false) !== false), \"\\n\";\nexit(3);\n",
    )
    .unwrap();
    let config = config();
    let program = Program::file(&file, "probe.php".into(), PhpIni::None).unwrap();
    let report = exec_diff::run(&config, &[program], false);
    assert_eq!(report.identical, 0);
    let modes: Vec<Mode> = report.mismatches.iter().map(|m| m.mode).collect();
    assert_eq!(modes, [Mode::Opcache, Mode::Roundtrip, Mode::Optimize]);
    for m in &report.mismatches {
        assert_eq!(m.first_diff, "stdout line 2: expected \"0\", got \"1\"");
        assert_eq!(m.same_as_opcache, m.mode != Mode::Opcache);
    }
    let json: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(json["programs"], 1);
    assert_eq!(json["identical"], 0);
    assert_eq!(json["mismatches"][1]["mode"], "roundtrip");
    assert_eq!(json["mismatches"][1]["file"], "probe.php");
}

#[test]
fn timeouts_and_exit_statuses_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let slow = tmp.path().join("slow.php");
    std::fs::write(
        &slow,
        "<?php\nif (ini_get('zopt.mode') === 'optimize') { sleep(30); }\necho 'done';\n",
    )
    .unwrap();
    let status = tmp.path().join("status.php");
    std::fs::write(
        &status,
        "<?php\necho 'x';\nexit(ini_get('zopt.mode') === 'roundtrip' ? 2 : 0);\n",
    )
    .unwrap();
    let config = Config {
        timeout: Duration::from_secs(3),
        ..config()
    };
    let programs = [
        Program::file(&slow, "slow.php".into(), PhpIni::None).unwrap(),
        Program::file(&status, "status.php".into(), PhpIni::None).unwrap(),
    ];
    let report = exec_diff::run(&config, &programs, false);
    assert_eq!(report.timeouts, [("slow.php".to_string(), Mode::Optimize)]);
    let diffs: Vec<(&str, Mode, &str)> = report
        .mismatches
        .iter()
        .map(|m| (m.file.as_str(), m.mode, m.first_diff.as_str()))
        .collect();
    assert_eq!(diffs.len(), 2, "{diffs:?}");
    assert_eq!(diffs[0].0, "slow.php");
    assert!(diffs[0].2.starts_with("timed out after"), "{diffs:?}");
    assert_eq!(
        diffs[1],
        (
            "status.php",
            Mode::Roundtrip,
            "exit status 2, expected exit status 0"
        )
    );
}

/// MediaWiki as a web server runs it, through php-cgi (a CGI request per run, with the
/// variables a server sets): page views, the edit form, history, special pages, the API and
/// ResourceLoader (its LESS compiled, its JavaScript minified), under every mode. What
/// changes from one request to the next (request ids, response times, the current time in
/// headers, forms and dates) is normalized away.
#[test]
fn mediawiki_pages_are_identical_under_every_mode_in_php_cgi() {
    let config = cgi_config();
    let (_wiki, settings) = install_mediawiki();
    let mediawiki = PathBuf::from("/usr/share/mediawiki");
    let programs: Vec<Program> = apps::MEDIAWIKI_REQUESTS
        .iter()
        .map(|&(script, query)| {
            let params = apps::mediawiki_cgi_params(&settings, script, query);
            let mut p = cgi_program(format!("GET {script}?{query}"), &mediawiki, script, params);
            p.normalize = apps::mediawiki_normalize();
            p
        })
        .collect();
    // MediaWiki fills its caches in the database (parser cache, ResourceLoader's module
    // dependencies) on the first view, and later views read them.
    assert_every_mode_identical(&config, &programs, true);

    // Real pages, not an error page every mode shares.
    let expect = [
        (
            "GET index.php?title=Main_Page",
            "MediaWiki has been installed",
        ),
        (
            "GET index.php?title=Main_Page&action=edit",
            "name=\"wpTextbox1\"",
        ),
        ("GET index.php?title=Special:Version", "Installed software"),
        ("GET api.php?action=query", "\"sitename\":\"ZoptWiki\""),
        ("GET load.php?modules=startup", "mw.loader.register"),
        ("GET load.php?modules=skins.vector", ".mw-body"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// Three real applications from Debian, run as a user would from the command line, under
/// every mode: DokuWiki renders its own syntax page, MediaWiki (installed into a temporary
/// SQLite database) parses wikitext with every parser feature and runs maintenance scripts,
/// Roundcube's mail libraries decode, wash and convert a message, and the libraries MediaWiki
/// ships compile its skin's LESS, minify its JavaScript, parse HTML and more (fixtures/apps).
#[test]
fn dokuwiki_mediawiki_and_roundcube_run_identically_under_every_mode() {
    let dokuwiki = "/usr/share/dokuwiki/bin/render.php";
    let syntax = require_file("/var/lib/dokuwiki/data/pages/wiki/syntax.txt", "dokuwiki");
    require_file(dokuwiki, "dokuwiki");
    let mediawiki = PathBuf::from("/usr/share/mediawiki");
    require_file(
        "/usr/share/roundcube/program/lib/Roundcube/bootstrap.php",
        "roundcube-core",
    );
    let config = config();
    let apps = workspace_root().join("fixtures/apps");

    let (_wiki, settings) = install_mediawiki();

    let command = |words: &[&str], cwd: &std::path::Path| {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        Program::command(&words, cwd, PhpIni::Default).unwrap()
    };
    let mut programs = Vec::new();
    let mut render = command(&[dokuwiki], &apps);
    render.name = "dokuwiki render.php < wiki/syntax.txt".into();
    render.stdin = Some(syntax);
    programs.push(render);
    for (name, words) in [
        ("parse.php < mediawiki.wiki", &["maintenance/parse.php"][..]),
        ("getText.php", &["maintenance/getText.php", "Main Page"]),
        ("showSiteStats.php", &["maintenance/showSiteStats.php"]),
        (
            "dumpBackup.php",
            &["maintenance/dumpBackup.php", "--current", "--quiet"],
        ),
        ("version.php", &["maintenance/version.php"]),
    ] {
        let mut p = command(words, &mediawiki);
        p.name = format!("mediawiki {name}");
        p.env
            .insert("MW_CONFIG_FILE".into(), settings.display().to_string());
        if name.starts_with("parse.php") {
            p.stdin = Some(apps.join("mediawiki.wiki"));
        }
        // version.php says when it ran (the "build" time of a tarball install is now).
        p.normalize.push(exec_diff::Normalize {
            pattern: r"\(built: [^)]*\)".into(),
            replacement: "(built: -)".into(),
        });
        programs.push(p);
    }
    for name in ["roundcube.php", "mediawiki_libraries.php"] {
        programs.push(Program::file(&apps.join(name), name.into(), PhpIni::Default).unwrap());
    }

    assert_every_mode_identical(&config, &programs, false);

    // The runs did the applications' work, not an early error every mode shares.
    let expect = [
        (
            "dokuwiki",
            "<h2 class=\"sectionedit2\" id=\"basic_text_formatting\">Basic Text Formatting</h2>",
        ),
        ("mediawiki parse.php", "<table class=\"wikitable sortable\""),
        (
            "mediawiki parse.php",
            "<span class=\"mw-headline\" id=\"Section_one\">Section one</span>",
        ),
        ("mediawiki getText", "MediaWiki has been installed"),
        ("mediawiki dumpBackup", "<title>Main Page</title>"),
        ("roundcube", "subject: Grüße aus Köln"),
        ("roundcube", "<a x-washed=\"href\">x</a>"),
        ("mediawiki_libraries", "content: '[';"),
        (
            "mediawiki_libraries",
            "<td>a</td><td>b</td></tr></tbody></table>",
        ),
        ("mediawiki_libraries", "0. Ana (admin): [a][b]"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// WordPress as a web server runs it, through php-cgi, on a MariaDB server of the test's own
/// (on a Unix socket, stopped with the test): the home page, posts with blocks (latest
/// posts, archives, categories, tag cloud, calendar, columns, tables) and classic content,
/// threaded comments, pages, archives, search, a missing post, RSS feeds, the REST API and
/// the sitemap, with the block theme Twenty Twenty-Three and the classic theme Twenty
/// Twenty-One, under every mode. Its content has fixed dates, so nothing of those is
/// normalized. Then wp-admin, logged in as the administrator (wp-admin/includes is much code
/// the front end never loads): the dashboard, the lists of posts and comments, the block
/// editor, plugins, general settings and the profile, and the REST API with the session's
/// cookies and nonce; of those, the current time and a random password are normalized.
#[test]
fn wordpress_pages_are_identical_under_every_mode_in_php_cgi() {
    let config = cgi_config();
    let wordpress = install_wordpress();
    let mut programs: Vec<Program> = apps::WORDPRESS_REQUESTS
        .iter()
        .map(|&(theme, query)| {
            let params = apps::wordpress_cgi_params(&wordpress, theme, query);
            let name = format!("wordpress {theme} GET /?{query}");
            cgi_program(name, &wordpress.site, "index.php", params)
        })
        .collect();
    let login = wordpress.log_in();
    for &(script, query) in apps::WORDPRESS_ADMIN_REQUESTS {
        let params = apps::wordpress_admin_cgi_params(&wordpress, &login, script, query);
        let name = format!("wordpress admin GET /wp-admin/{script}?{query}");
        let mut p = cgi_program(name, &wordpress.site, "wp-admin.php", params);
        p.normalize = apps::wordpress_admin_normalize();
        programs.push(p);
    }
    // The post as its editor reads it (`context=edit`: raw content, which needs the
    // edit_post capability): the REST API takes the cookies only with the nonce.
    let route = "rest_route=/wp/v2/posts/4&context=edit";
    let query = format!("{route}&_wpnonce={}", login.rest_nonce);
    let mut params = apps::wordpress_cgi_params(&wordpress, "", &query);
    params.extend(login.browser_params());
    let name = format!("wordpress admin GET /?{route}");
    programs.push(cgi_program(name, &wordpress.site, "index.php", params));
    // WordPress stores what it computes on a first view (the theme's global styles, rewrite
    // rules, cron schedules, update checks, the dashboard's draft) and later views read it.
    assert_every_mode_identical(&config, &programs, true);
    let expect = [
        (
            "wordpress  GET /?p=4",
            "Premature optimization is the root of all evil.",
        ),
        ("wordpress  GET /?p=4", "wp-block-latest-posts__list"),
        ("wordpress  GET /?p=4", "A reply<br />"),
        ("wordpress  GET /?s=post", "Search results for"),
        ("wordpress  GET /?feed=rss2", "<title>SSA in PHP</title>"),
        (
            "wordpress  GET /?rest_route=/wp/v2/posts",
            "\"slug\":\"ssa-in-php\"",
        ),
        (
            "wordpress  GET /?sitemap=index",
            "sitemap=posts&amp;sitemap-subtype=page",
        ),
        (
            "wordpress twentytwentyone GET /?p=4",
            "twenty-twenty-one-style-css",
        ),
        // Logged in, not redirected to wp-login.php.
        (
            "wordpress admin GET /wp-admin/index.php",
            "<title>Dashboard &lsaquo; Zopt Blog",
        ),
        (
            "wordpress admin GET /wp-admin/index.php",
            "Howdy, <span class=\"display-name\">admin",
        ),
        (
            "wordpress admin GET /wp-admin/edit.php",
            "(Edit)\">SSA in PHP</a>",
        ),
        (
            "wordpress admin GET /wp-admin/post.php",
            "wp.editPost.initializeEditor( 'editor', \"post\", 4,",
        ),
        (
            "wordpress admin GET /wp-admin/edit-comments.php",
            "Great post! <b>bold</b> x()</p>",
        ),
        (
            "wordpress admin GET /wp-admin/plugins.php",
            "Akismet Anti-Spam",
        ),
        (
            "wordpress admin GET /wp-admin/options-general.php",
            "id=\"blogname\" value=\"Zopt Blog\"",
        ),
        (
            "wordpress admin GET /wp-admin/profile.php",
            "value=\"admin@example.org\"",
        ),
        (
            "wordpress admin GET /?rest_route",
            "\"title\":{\"raw\":\"SSA in PHP\"",
        ),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// WordPress's and phpMyAdmin's PHP libraries, run as their applications use them, under
/// every mode: WordPress's formatting, KSES, hooks, shortcodes, block parser, Text_Diff,
/// phpass, Requests, PHPMailer and SimplePie (fixtures/apps/wordpress.php, no database), and
/// phpMyAdmin's SQL parser lexing, parsing, rebuilding, formatting and analysing MySQL
/// statements (fixtures/apps/phpmyadmin_sql_parser.php).
#[test]
fn wordpress_and_phpmyadmin_libraries_run_identically_under_every_mode() {
    require_file(
        "/usr/share/wordpress/wp-includes/formatting.php",
        "wordpress",
    );
    require_file(
        "/usr/share/php/PhpMyAdmin/SqlParser/autoload.php",
        "php-phpmyadmin-sql-parser",
    );
    let config = config();
    let programs = app_programs(&["wordpress.php", "phpmyadmin_sql_parser.php"]);
    assert_every_mode_identical(&config, &programs, false);
    let expect = [
        ("wordpress", "gruse-aus-koln-unicode-stuff-2026"),
        (
            "wordpress",
            "A <div class=\"box red\" data-size=\"3\">inner SHOUT</div>",
        ),
        (
            "wordpress",
            "my-plugin/custom {\"list\":[1,2,{\"x\":\"y\"}]",
        ),
        ("wordpress", "The quick <del>brown</del><ins>red</ins> fox"),
        ("wordpress", "$P$B12345678uMkEEiNXlW9rq2Nl1y1cs. true false"),
        ("wordpress", "../../../g => http://a/g"),
        (
            "wordpress",
            "Subject: =?UTF-8?Q?Gr=C3=BC=C3=9Fe_aus_K=C3=B6ln",
        ),
        (
            "wordpress",
            "enclosure https://example.org/a.mp3 audio/mpeg 1234",
        ),
        (
            "phpmyadmin_sql_parser",
            "PhpMyAdmin\\SqlParser\\Statements\\CreateStatement",
        ),
        ("phpmyadmin_sql_parser", "ON DELETE CASCADE"),
        ("phpmyadmin_sql_parser", "SELECT * FROM `a` WHERE c = 1"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// Horde's libraries and other PHP libraries of Debian, older and newer styles of PHP code,
/// run as their users run them, under every mode: Horde's MIME, iCalendar, text diff and
/// filters, dates and recurrences, natural-language date parsing, RFC 822 addresses, IMAP
/// client utilities, Blowfish, routes and minifiers (fixtures/apps/horde.php); Faker from
/// fixed seeds in five locales, Sabre's VObject expanding a recurring event, EasyRdf and
/// JsonSchema (fixtures/apps/php_libraries.php); Doctrine ORM 2 on SQLite in memory (mapping
/// by attributes, schema tool, unit of work with cascades and lifecycle callbacks, DQL, the
/// query builder, lazy collections with criteria, proxies made by eval, and three platforms'
/// SQL: fixtures/apps/doctrine.php); and PHP_CodeSniffer, a whole application,
/// checking the fixtures against three coding standards and printing the fixes of its
/// fixers as a diff.
#[test]
fn horde_doctrine_php_libraries_and_php_codesniffer_run_identically_under_every_mode() {
    require_file("/usr/share/php/Horde/Mime/Part.php", "php-horde-mime");
    require_file("/usr/share/php/Faker/autoload.php", "php-faker");
    require_file(
        "/usr/share/php/Sabre/VObject/autoload.php",
        "php-sabre-vobject",
    );
    require_file(
        "/usr/share/php/Doctrine/ORM/autoload.php",
        "php-doctrine-orm",
    );
    require_tool("phpcs", "apt-get install php-codesniffer");
    let config = config();
    let mut programs = app_programs(&["horde.php", "php_libraries.php", "doctrine.php"]);
    let fixtures = workspace_root().join("fixtures/php");
    let mut apps: Vec<String> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("app_") && f.ends_with(".php"))
        .collect();
    apps.sort();
    let phpcs = |name: &str, args: &[&str], files: &[String]| {
        let words: Vec<String> = ["phpcs", "-q", "--no-cache"]
            .iter()
            .chain(args)
            .map(|w| w.to_string())
            .chain(files.iter().cloned())
            .collect();
        let mut p = Program::command(&words, &fixtures, PhpIni::Default).unwrap();
        p.name = name.into();
        p
    };
    programs.push(phpcs(
        "phpcs json",
        &["--standard=Squiz,PEAR", "--report=json", "."],
        &[],
    ));
    programs.push(phpcs(
        "phpcs diff",
        &["--standard=PSR12", "--report=diff"],
        &apps,
    ));
    assert_every_mode_identical(&config, &programs, false);
    let expect = [
        ("horde", "1 text/plain utf-8"),
        ("horde", "Optimizer review, part 2"),
        ("horde", "<del>two</del><ins>2</ins>"),
        ("horde", "12-07 Mon 12-10 Thu 12-21 Mon"),
        ("horde", "dec 25 at 7pm: 2026-12-25 19:00"),
        ("horde", "xn--bcher-kva.example bücher.example"),
        ("horde", "/archive/2026/12 => {\"year\":\"2026\""),
        ("php_libraries", "de_DE: Luise Graf"),
        ("php_libraries", "2026-12-16 08:00 UTC 20261216T090000"),
        ("php_libraries", "knows http://example.org/bob Bob"),
        (
            "php_libraries",
            "tags: There are no duplicates allowed in the array",
        ),
        ("doctrine", "1 ana-lima bob-co- 2"),
        ("doctrine", "Ana Lima: 2 orders, 220.49"),
        ("doctrine", "1 Ana Lima 120.5 [applex5,pearx4]"),
        ("doctrine", "  big: 120.5,99.99 all: 2"),
        ("doctrine", "5 paid\n84\n"),
        ("doctrine", "OFFSET 20 ROWS FETCH NEXT 10 ROWS ONLY"),
        ("phpcs json", "Squiz.WhiteSpace"),
        ("phpcs json", "PEAR.Commenting.FunctionComment.Missing"),
        ("phpcs diff", "+++ PHP_CodeSniffer"),
        ("phpcs diff", "+final class LRUCache\n+{"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// Modern framework code, under every mode: Laravel 8's components with the libraries they
/// bring (fixtures/apps/laravel.php: collections, strings, the container, events, the
/// pipeline, validation, Eloquent and the query builder on SQLite in memory and the SQL of
/// four grammars, Carbon at a fixed time in several locales, CommonMark, UUIDs, the
/// inflector, Monolog, Symfony Console ...), and Smarty 4 compiling the templates of
/// fixtures/apps/smarty-templates (inheritance, includes, template functions, sections,
/// modifiers, plugins) and running the PHP it compiled them to (fixtures/apps/smarty.php).
#[test]
fn laravel_and_smarty_run_identically_under_every_mode() {
    require_file(
        "/usr/share/php/Illuminate/autoload.php",
        "php-laravel-framework",
    );
    require_file("/usr/share/php/smarty4/bootstrap.php", "smarty4");
    let config = config();
    let programs = app_programs(&["laravel.php", "smarty.php"]);
    assert_every_mode_identical(&config, &programs, false);
    let expect = [
        // A higher-order message (`->map->sum`) on a grouped collection.
        ("laravel", "paid by customer: {\"ana\":220.49,\"bob\":42}"),
        ("laravel", "contextual: file | memory"),
        ("laravel", "  wildcard user.login [\"ana\"]"),
        ("laravel", "  age: [\"Age must be 18 to 99 years.\"]"),
        ("laravel", "Das Feld name muss ausgefüllt werden."),
        (
            "laravel",
            "eager: [{\"Ana\":[\"Ssa In Php [php,compilers]\",\"The Opcache Optimizer [php,sql,compilers]\"]}",
        ),
        (
            "laravel",
            "on duplicate key update `a` = values(`a`)",
        ),
        (
            "laravel",
            "diff 2026-11-30 22:00: 12 hours ago | vor 12 Stunden | il y a 12 heures",
        ),
        ("laravel", "<td align=\"right\">14</td>"),
        ("laravel", "name based: 1119a220-8d0a-52be-b1b8-a90b75caed1f"),
        ("laravel", " [OK] Done"),
        // Rebuilt through a stream wrapper (compiled on every run, no cache keeps it).
        ("laravel", "restored closure: 21px | 6em"),
        ("smarty", "<h2>1/3. SSA in PHP &lt;draft&gt;</h2>"),
        ("smarty", "<footer>&copy; 2026 ZOPT JOURNAL</footer>"),
        ("smarty", "<div class=\"row1\">6,5,4</div>"),
        ("smarty", "CUSTOM BLOCK 7! Hi Ana! Hi Ana!"),
        ("smarty", "compiled templates: 8"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// phpMyAdmin as a web server runs it, through php-cgi, with no database server: its login
/// page in English and German (MoTranslator reading Debian's translations, Twig templates,
/// its configuration and dependency-injection container), under every mode. Sessions go
/// to a directory of the test's own; what changes from one request to the next (the
/// session id, the form token, the current time in headers) is normalized away.
#[test]
fn phpmyadmin_login_pages_are_identical_under_every_mode_in_php_cgi() {
    let config = cgi_config();
    require_file("/usr/share/phpmyadmin/index.php", "phpmyadmin");
    let dir = tempfile::tempdir().unwrap();
    let ini = dir.path().join("ini");
    let sessions = dir.path().join("sessions");
    std::fs::create_dir(&ini).unwrap();
    std::fs::create_dir(&sessions).unwrap();
    std::fs::write(
        ini.join("zz-zopt-test.ini"),
        format!("session.save_path={}\n", sessions.display()),
    )
    .unwrap();
    let phpmyadmin = PathBuf::from("/usr/share/phpmyadmin");
    let normalize = [
        (r"(?m)^(Set-Cookie: [a-zA-Z_]+)=[^;\r\n]*;[^\r\n]*", "$1=-"),
        (r"(?m)^(Expires|Last-Modified): [^\r\n]*", "$1: -"),
        (r#"token:"[0-9a-f]+""#, r#"token:"-""#),
        (
            r#"name="(token|set_session)" value="[0-9a-z]+""#,
            r#"name="$1" value="-""#,
        ),
    ];
    let programs: Vec<Program> = ["", "lang=de"]
        .into_iter()
        .map(|query| {
            let mut params = apps::cgi_get_params(
                "/usr/share/phpmyadmin/index.php",
                "/phpmyadmin/index.php",
                &format!("/phpmyadmin/index.php?{query}"),
                query,
            );
            // An empty element keeps Debian's scan directory (its extensions).
            params.push(("PHP_INI_SCAN_DIR".into(), format!(":{}", ini.display())));
            let name = format!("phpmyadmin GET index.php?{query}");
            let mut p = cgi_program(name, &phpmyadmin, "index.php", params);
            p.normalize = apps::normalizations(&normalize);
            p
        })
        .collect();
    assert_every_mode_identical(&config, &programs, false);
    let expect = [
        ("phpmyadmin GET index.php?", "id=\"input_username\""),
        ("phpmyadmin GET index.php?lang=de", "Willkommen bei"),
    ];
    assert_optimized_outputs_contain(&config, &programs, &expect);
}

/// The configuration of the tests that serve an application as a web server runs it: one
/// CGI request per run, through php-cgi.
/// Programs of fixtures/apps, run with PHP's php.ini (they need Debian's extensions).
fn app_programs(names: &[&str]) -> Vec<Program> {
    let apps = workspace_root().join("fixtures/apps");
    names
        .iter()
        .map(|&name| Program::file(&apps.join(name), name.into(), PhpIni::Default).unwrap())
        .collect()
}

fn cgi_config() -> Config {
    const PHP_CGI: &str = "/usr/bin/php-cgi8.2";
    require_file(PHP_CGI, "php8.2-cgi");
    Config {
        php: PathBuf::from(PHP_CGI),
        ..config()
    }
}

/// A CGI request of `script` in `dir` (Debian's php.ini), `params` its CGI variables.
fn cgi_program(
    name: String,
    dir: &std::path::Path,
    script: &str,
    params: Vec<(String, String)>,
) -> Program {
    let mut p = Program::command(&[format!("./{script}")], dir, PhpIni::Default).unwrap();
    p.name = name;
    p.env.extend(params);
    p
}

/// Runs `programs` under every mode: each prints what PHP without OPcache prints. With
/// `warm_up`, each runs once without OPcache first, for applications that fill caches of
/// their own (in their database) on a first request and read them on later ones.
fn assert_every_mode_identical(config: &Config, programs: &[Program], warm_up: bool) {
    if warm_up {
        for p in programs {
            let out = config.run(p, Mode::Off).unwrap();
            assert_eq!(out.status, Some(0), "{}", p.name);
        }
    }
    let report = exec_diff::run(config, programs, false);
    assert_identical(&report, &[], &[]);
    assert_eq!(report.identical, programs.len());
}

/// The runs did the applications' work, not an early error every mode shares: under zopt's
/// optimizer, the program whose name starts with each prefix prints its text. Each program
/// runs once, however many texts it must print.
fn assert_optimized_outputs_contain(
    config: &Config,
    programs: &[Program],
    expect: &[(&str, &str)],
) {
    let mut outputs: std::collections::HashMap<&str, String> = Default::default();
    for &(prefix, text) in expect {
        let p = programs
            .iter()
            .find(|p| p.name.starts_with(prefix))
            .unwrap_or_else(|| panic!("no program named {prefix}..."));
        let stdout = outputs.entry(&p.name).or_insert_with(|| {
            let out = config.run(p, Mode::Optimize).unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        });
        assert!(stdout.contains(text), "{}: no {text:?} in {stdout}", p.name);
    }
}
