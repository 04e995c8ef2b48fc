//! End-to-end tests of the reports (`--report-json`, `--junit`, `--markdown`) that need no
//! database: valid whatever the values, checked before the run, all written when one fails,
//! and a JSON exit code that is the process's.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "test helpers: a panic is a test failure, which is the point"
)]

use std::path::{Path, PathBuf};

use awa_conformance_runner::exit::{HARNESS, NONCONFORMANT, SUCCESS, USAGE};
use serde_json::Value;

mod support;

use support::{assert_valid_report, code, offline as run, read_json, stderr, stdout};

/// What a JUnit consumer checks first: only XML 1.0 characters, and a document that parses.
fn assert_well_formed_junit(path: &Path) -> quick_junit::Report {
    let xml = std::fs::read_to_string(path).unwrap();
    let is_xml_char = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    if let Some((at, c)) = xml.char_indices().find(|(_, c)| !is_xml_char(*c)) {
        panic!(
            "U+{:04X} at byte {at} of {} is not XML 1.0",
            u32::from(c),
            path.display()
        );
    }
    quick_junit::Report::deserialize_from_str(&xml).unwrap()
}

/// The hostile adapter (tests/hostile/hostile_values.py), with its argument.
fn hostile_adapter(arg: &str) -> String {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/hostile_values.py");
    format!("python3 {} {arg}", script.display())
}

/// The name of one offline case that passes.
fn one_passing_case() -> String {
    let out = run(&["--list", "--no-embedded", "canonical_json::"]);
    let line = stdout(&out).lines().next().unwrap().to_owned();
    line.trim_end_matches(": test").to_owned()
}

#[test]
fn a_run_failing_every_family_with_hostile_values_writes_valid_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit, md) = (
        dir.path().join("r.json"),
        dir.path().join("j.xml"),
        dir.path().join("s.md"),
    );
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter(""),
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "-q",
        "adapter::",
    ]);
    assert_eq!(code(&out), NONCONFORMANT, "{}", stderr(&out));
    let report = read_json(&json);
    assert_valid_report(&report);
    // Every vector case failed, and the JSON report keeps the values whole.
    let cases = report["cases"].as_array().unwrap();
    let vector_cases: Vec<&Value> = cases
        .iter()
        .filter(|c| c["name"] != "adapter::coverage")
        .collect();
    assert!(vector_cases.len() > 1000, "{}", vector_cases.len());
    assert!(vector_cases.iter().all(|c| c["status"] == "failed"));
    let text = report.to_string();
    assert!(
        text.contains('\u{FFFF}') && text.contains("\\u0000"),
        "JSON dropped a value"
    );
    assert!(
        cases.iter().any(|c| c["actual"]["big"]
            .as_str()
            .is_some_and(|s| s.len() > 1_000_000)),
        "the 1 MB value is not kept whole"
    );
    let parsed = assert_well_formed_junit(&junit);
    let failures = parsed
        .test_suites
        .iter()
        .flat_map(|s| &s.test_cases)
        .filter(|c| matches!(c.status, quick_junit::TestCaseStatus::NonSuccess { .. }))
        .count();
    assert!(failures >= vector_cases.len(), "{failures}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    // Values reach JUnit as JSON text (controls already escaped there), the adapter's name
    // as it said it (U+FFFF and U+0001): both shown, neither dropped.
    assert!(
        xml.contains("\\u{FFFF}") && xml.contains("hostile\\u{FFFF}\\u{0001}"),
        "not shown visibly"
    );
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .contains("nonconformant"));
}

#[test]
fn a_lone_surrogate_from_an_adapter_still_gives_well_formed_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit) = (dir.path().join("r.json"), dir.path().join("j.xml"));
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter("lone-surrogate"),
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "-q",
        "adapter::",
    ]);
    // An answer that is not JSON is a harness error, reported with the line.
    assert_eq!(code(&out), HARNESS, "{}", stderr(&out));
    let report = read_json(&json);
    assert_valid_report(&report);
    assert_eq!(report["exit_code"], 6);
    assert!(report.to_string().contains("udc00"), "{report}");
    assert_well_formed_junit(&junit);
}

#[test]
fn a_report_path_that_cannot_be_written_is_a_usage_error_before_any_case_runs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let json = dir.path().join("r.json");
    let case = one_passing_case();
    for (option, path) in [
        ("--junit", dir.path().join("no-such-dir/j.xml")),
        ("--junit", dir.path().to_owned()),
        ("--markdown", file.join("s.md")),
        ("--report-json", dir.path().join("missing/r.json")),
    ] {
        let mut args = vec!["--exact", &case, option, path.to_str().unwrap()];
        let json_str = json.to_str().unwrap().to_owned();
        if option != "--report-json" {
            args.extend(["--report-json", &json_str]);
        }
        let out = run(&args);
        let err = stderr(&out);
        assert_eq!(code(&out), USAGE, "{option} {}: {err}", path.display());
        assert!(
            err.contains(&format!("{option} {}", path.display())),
            "names neither option nor path: {err}"
        );
        assert!(!err.contains("conformant"), "a verdict was printed: {err}");
        assert!(
            !stdout(&out).contains("running"),
            "a case ran: {}",
            stdout(&out)
        );
        assert!(
            !json.exists(),
            "a report was written for a run that did not happen"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
    // The probe of a new file leaves nothing behind when the run then stops without reports
    // (here at the expected-failures file, read after the reports were checked).
    let fresh = dir.path().join("fresh.xml");
    let missing = dir.path().join("no-such-xfail.json");
    let out = run(&[
        "--exact",
        &case,
        "--junit",
        fresh.to_str().unwrap(),
        "--expected-failures",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), USAGE, "{}", stderr(&out));
    assert!(!fresh.exists(), "the probe left {}", fresh.display());
}

#[test]
fn two_reports_naming_the_same_file_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let existing = d.join("old.json");
    std::fs::write(&existing, "{}").unwrap();
    std::fs::hard_link(&existing, d.join("hard.xml")).unwrap();
    std::os::unix::fs::symlink(&existing, d.join("soft.xml")).unwrap();
    std::fs::create_dir(d.join("sub")).unwrap();
    let case = one_passing_case();
    let same = |a: &Path, b: &Path| [a.to_owned(), b.to_owned()];
    for [json, other] in [
        same(&d.join("new.json"), &d.join("sub/../new.json")),
        same(&existing, &d.join("soft.xml")),
        same(&existing, &d.join("hard.xml")),
        same(&d.join("r"), &d.join("./r")),
    ] {
        for option in ["--junit", "--markdown", "--write-baseline"] {
            let out = run(&[
                "--exact",
                &case,
                "--report-json",
                json.to_str().unwrap(),
                option,
                other.to_str().unwrap(),
            ]);
            let err = stderr(&out);
            assert_eq!(code(&out), USAGE, "{option} {}: {err}", other.display());
            assert!(
                err.contains("--report-json") && err.contains(option) && err.contains("same file"),
                "{err}"
            );
        }
    }
    assert_eq!(std::fs::read_to_string(&existing).unwrap(), "{}");
    assert!(!d.join("new.json").exists() && !d.join("r").exists());
    // Distinct files are fine, and all three are written.
    let out = run(&[
        "--exact",
        &case,
        "--report-json",
        d.join("a.json").to_str().unwrap(),
        "--junit",
        d.join("a.xml").to_str().unwrap(),
        "--markdown",
        d.join("a.md").to_str().unwrap(),
    ]);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    for name in ["a.json", "a.xml", "a.md"] {
        assert!(d.join(name).is_file(), "{name}");
    }
}

#[test]
fn every_report_is_written_when_one_fails_and_the_json_states_the_exit_code() {
    // /dev/full accepts the up-front check (it opens) and fails every write (ENOSPC): the
    // failure comes at the end of a conformant run, when it is too late for a usage error.
    let case = one_passing_case();
    for failing in ["--junit", "--markdown"] {
        let dir = tempfile::tempdir().unwrap();
        let (json, junit, md) = (
            dir.path().join("r.json"),
            dir.path().join("j.xml"),
            dir.path().join("s.md"),
        );
        let path_of = |option: &str, own: &Path| {
            if option == failing {
                "/dev/full".to_owned()
            } else {
                own.to_str().unwrap().to_owned()
            }
        };
        let out = run(&[
            "--exact",
            &case,
            "--report-json",
            json.to_str().unwrap(),
            "--junit",
            &path_of("--junit", &junit),
            "--markdown",
            &path_of("--markdown", &md),
        ]);
        let err = stderr(&out);
        assert_eq!(code(&out), HARNESS, "{failing}: {err}");
        assert!(
            err.contains(&format!("{failing} /dev/full: the report was not written")),
            "{err}"
        );
        assert!(!err.contains("conformant (exit 0)"), "{err}");
        assert!(err.contains("error (exit 6)"), "{err}");
        let report = read_json(&json);
        assert_valid_report(&report);
        assert_eq!(report["exit_code"], 6, "{report}");
        assert_eq!(report["verdict"], "error", "{report}");
        assert!(
            report["run_errors"][0]
                .as_str()
                .unwrap()
                .contains("/dev/full"),
            "{report}"
        );
        // The other report was written too (the Markdown summary before the JUnit file, so
        // it cannot know that the JUnit write is going to fail; the JSON report comes last).
        if failing == "--junit" {
            assert!(std::fs::read_to_string(&md)
                .unwrap()
                .contains("## awa-conformance: "));
        } else {
            assert_well_formed_junit(&junit);
        }
    }
}

#[test]
fn markdown_on_stdout_comes_whole_after_the_trial_lines() {
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_adapter(""),
        "--markdown",
        "-",
        "adapter::",
    ]);
    assert_eq!(code(&out), NONCONFORMANT, "{}", stderr(&out));
    let text = stdout(&out);
    let start = text
        .find("## awa-conformance: ")
        .expect("no Markdown on stdout");
    let (trials, markdown) = text.split_at(start);
    assert!(trials.contains("\ntest result: FAILED."), "{trials}");
    assert!(
        !markdown
            .lines()
            .any(|l| l.starts_with("test ") || l.starts_with("failures:")),
        "trial output after the Markdown: {markdown}"
    );
    assert_eq!(text.matches("## awa-conformance: ").count(), 1);
}

// --- Foreign text is inert wherever it is shown (ADR 0059) ------------------------------------

/// What a hostile producer or report puts in its name, version and messages: a newline and a
/// heading, an image with an `onerror`, a `javascript:` link, a mention and a bidi override.
const HOSTILE: &str = "hostile\n# heading\n<img src=x onerror=alert(1)> [x](javascript:alert(1)) \
                       @someone \u{202E}evil\u{202C}";

/// The hostile adapter for Markdown and terminal outputs (tests/hostile/hostile_markdown.py).
fn hostile_markdown_adapter() -> String {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile/hostile_markdown.py");
    format!("python3 {}", script.display())
}

/// A report file as a run writes it, with the given verdict, exit code, producer name (hello
/// name and version), level and cases.
fn report_file(
    dir: &Path,
    file: &str,
    verdict: &str,
    exit_code: u8,
    producer: &str,
    level: &str,
    cases: &[Value],
) -> PathBuf {
    let report = serde_json::json!({
        "format": "awa-conformance-report", "format_version": 1,
        "verdict": verdict, "exit_code": exit_code,
        "provenance": {
            "kit_version": "0.1.0", "kit_contract_version": 1, "vectors_root_sha256": "ab",
            "vectors_source": "embedded", "server_version": "18.4", "contract_version": "1",
            "database": "dsn (flag)", "level": level, "started_at": "2026-12-03T00:00:00Z",
            "argv": [], "extra": {"producer": producer}
        },
        "summary": {}, "run_errors": [], "cases": cases
    });
    let path = dir.join(file);
    std::fs::write(&path, report.to_string()).unwrap();
    path
}

fn case(name: &str, status: &str, message: &str) -> Value {
    serde_json::json!({"name": name, "suite": "producer", "status": status, "message": message})
}

/// The lines of Markdown outside its fenced code blocks (inside one nothing is markup).
fn outside_fences(md: &str) -> Vec<&str> {
    let mut fence: Option<String> = None;
    let mut lines = Vec::new();
    for line in md.lines() {
        let trimmed = line.trim_start();
        let ticks: String = trimmed.chars().take_while(|c| *c == '`').collect();
        match &fence {
            Some(f) if trimmed == f.as_str() => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => lines.push(line),
        }
    }
    assert!(fence.is_none(), "a fence is left open:\n{md}");
    lines
}

/// Markdown a hostile name or message went into is inert: no character that reorders or
/// rewrites text, and outside code blocks no tag, no `javascript:` link, no mention, and no
/// heading but those `allowed` (the hostile text stayed on its line).
fn assert_inert_markdown(md: &str, allowed_headings: &[&str]) {
    assert!(
        !md.chars()
            .any(|c| matches!(c, '\u{202A}'..='\u{202E}' | '\u{1B}' | '\r' | '\u{7}')),
        "a control or bidi character is raw:\n{md}"
    );
    for line in outside_fences(md) {
        for raw in ["<img", "](javascript", "<javascript", "@someone"] {
            assert!(
                !line.contains(raw),
                "{raw} outside a code block: {line}\n{md}"
            );
        }
        if line.starts_with('#') {
            assert!(
                allowed_headings.iter().any(|h| line.starts_with(h)),
                "injected heading {line:?} in\n{md}"
            );
        }
    }
}

/// What reaches a terminal holds no bidi control, no carriage return and no escape sequence
/// (the runs here do not colour: their output is not a terminal).
fn assert_inert_terminal(text: &str) {
    if let Some(c) = text.chars().find(|c| {
        matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{200E}' | '\u{200F}' | '\u{1B}' | '\r' | '\u{7}')
    }) {
        panic!("U+{:04X} reached the terminal raw:\n{text}", u32::from(c));
    }
}

#[test]
fn a_hostile_adapter_is_inert_in_the_markdown_summary_junit_the_terminal_and_report_diff() {
    let dir = tempfile::tempdir().unwrap();
    let (json, junit, md) = (
        dir.path().join("r.json"),
        dir.path().join("j.xml"),
        dir.path().join("s.md"),
    );
    let out = run(&[
        "--no-embedded",
        "--adapter",
        &hostile_markdown_adapter(),
        "--report-json",
        json.to_str().unwrap(),
        "--junit",
        junit.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
        "adapter::unique_key::",
    ]);
    assert_eq!(code(&out), NONCONFORMANT, "{}", stderr(&out));
    // The terminal: the failure texts libtest prints, and the adapter's own stderr.
    assert_inert_terminal(&stdout(&out));
    assert_inert_terminal(&stderr(&out));
    assert!(stdout(&out).contains("\\u{202E}evil"), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("stderr of the adapter:"),
        "{}",
        stderr(&out)
    );
    // The run's own Markdown: the error text's first line in the item, the rest fenced.
    let summary = std::fs::read_to_string(&md).unwrap();
    assert_inert_markdown(&summary, &["## awa-conformance: ", "### Failures", "#### "]);
    assert!(summary.contains("\\u{202E}evil"), "{summary}");
    assert!(summary.contains("\n  ````text\n  # heading\n"), "{summary}");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(!xml.contains('\u{202E}') && xml.contains("\\u{202E}evil"));
    assert_well_formed_junit(&junit);
    // The adapter's hello name and version name the row in `report diff` and `compatibility`.
    let diff = run(&[
        "report",
        "diff",
        json.to_str().unwrap(),
        json.to_str().unwrap(),
    ]);
    assert_eq!(code(&diff), SUCCESS, "{}", stderr(&diff));
    let text = stdout(&diff);
    assert_inert_markdown(&text, &["### awa-conformance: hostile "]);
    let heading = text.lines().next().unwrap();
    assert!(
        heading.contains("\\# heading") && heading.contains("&lt;img") && heading.contains(" → "),
        "{heading}"
    );
    let table = run(&["report", "compatibility", json.to_str().unwrap()]);
    assert_eq!(code(&table), SUCCESS, "{}", stderr(&table));
    let text = stdout(&table);
    assert_inert_markdown(
        &text,
        &["# Compatibility", "## Implementations", "## Features"],
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("| 1 | hostile "))
        .unwrap();
    // Six cells: number, name, verdict, contract, level, producer features.
    assert_eq!(
        row.matches(" | ").count(),
        5,
        "the name broke out of its cell: {row}"
    );
}

#[test]
fn a_hostile_producer_name_and_failure_in_report_files_are_inert_in_diff_and_compatibility() {
    let dir = tempfile::tempdir().unwrap();
    let old = report_file(
        dir.path(),
        "old.json",
        "conformant",
        0,
        "awa-py 1.0",
        "core",
        &[case("producer::unique_key::a", "passed", "")],
    );
    let new = report_file(
        dir.path(),
        "new.json",
        "nonconformant",
        1,
        &format!("{HOSTILE} 2.0{HOSTILE}"),
        &format!("core{HOSTILE}"),
        &[
            case("producer::unique_key::a", "failed", HOSTILE),
            case(
                &format!("producer::unique_key::{HOSTILE}"),
                "failed",
                HOSTILE,
            ),
        ],
    );
    let diff = run(&[
        "report",
        "diff",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    assert_eq!(code(&diff), SUCCESS, "{}", stderr(&diff));
    let text = stdout(&diff);
    assert_inert_markdown(&text, &["### awa-conformance: awa-py 1.0 → hostile "]);
    assert!(text.contains("**Newly failing: 2**"), "{text}");
    // A hostile case name is shown as escaped text, not in a code span it could leave.
    assert!(
        text.contains("- `producer::unique_key::a`: passed → failed"),
        "{text}"
    );
    assert!(
        text.contains("- producer::unique_key::hostile \\# heading &lt;img"),
        "{text}"
    );
    let table = run(&[
        "report",
        "compatibility",
        old.to_str().unwrap(),
        new.to_str().unwrap(),
    ]);
    assert_eq!(code(&table), SUCCESS, "{}", stderr(&table));
    let text = stdout(&table);
    assert_inert_markdown(
        &text,
        &["# Compatibility", "## Implementations", "## Features"],
    );
    let row = text
        .lines()
        .find(|l| l.starts_with("| 2 | hostile "))
        .unwrap();
    // Six cells: number, name, verdict, contract, level, producer features.
    assert_eq!(
        row.matches(" | ").count(),
        5,
        "the name broke out of its cell: {row}"
    );
}

#[test]
fn kill_matrix_prose_links_other_than_http_are_text_and_the_policy_names_the_script_by_hash() {
    let dir = tempfile::tempdir().unwrap();
    let report = report_file(
        dir.path(),
        "r.json",
        "nonconformant",
        1,
        HOSTILE,
        "core",
        &[case("producer::unique_key::a", "failed", HOSTILE)],
    );
    let kill = dir.path().join("kill-matrix.md");
    std::fs::write(
        &kill,
        "Prose around the table: [click](javascript:alert(1)), <javascript:alert(2)>, \
         [case](JaVaScRiPt:alert(3)), [tab](java&#x09;script:alert(4)), \
         [entity](&#106;avascript:alert(5)), [data](data:text/html;base64,PHNjcmlwdD4=), \
         [vb](vbscript:msgbox), [ok](https://example.com/) and [here](#top). \
         <img src=x onerror=alert(6)> <script>alert(7)</script>\n\n\
         <!-- BEGIN GENERATED -->\n| mutant | sql |\n|---|---|\n| a | [x](javascript:alert(8)) |\n\
         <!-- END GENERATED -->\n",
    )
    .unwrap();
    let page = dir.path().join("page");
    let out = run(&[
        "report",
        "html",
        "--out",
        page.to_str().unwrap(),
        "--kill-matrix",
        kill.to_str().unwrap(),
        report.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    let html = std::fs::read_to_string(page.join("index.html")).unwrap();
    let hrefs: Vec<String> = html
        .split("href=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect();
    assert_eq!(hrefs, ["https://example.com/", "#top"], "{html}");
    let lower = html.to_ascii_lowercase();
    for raw in [
        "href=\"javascript",
        "href='javascript",
        "<img",
        "<script>alert",
    ] {
        assert!(!lower.contains(raw), "{raw} in the page");
    }
    assert!(
        html.contains("&lt;img src=x onerror=alert(6)&gt;"),
        "raw HTML not shown as text"
    );
    assert!(
        html.contains("javascript:alert(2)"),
        "the autolink's text is gone"
    );
    assert!(!html.contains('\u{202E}') && html.contains("\\u{202E}evil"));
    // The policy runs the page's one script by its hash, and nothing inline besides.
    let csp = html
        .split("http-equiv=\"Content-Security-Policy\" content=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap();
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    let scripts: Vec<&str> = html
        .split("<script>")
        .skip(1)
        .filter_map(|rest| rest.split("</script>").next())
        .collect();
    assert_eq!(scripts.len(), 1, "one executable script");
    let hash = {
        use base64::Engine as _;
        use sha2::Digest as _;
        base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(scripts[0]))
    };
    assert!(
        csp.contains(&format!("script-src 'sha256-{hash}';")),
        "{csp}"
    );
}

/// The badge's SVG parses as XML and holds only XML 1.0 characters; returns its texts.
fn parse_svg(path: &Path) -> Vec<String> {
    let svg = std::fs::read_to_string(path).unwrap();
    let is_xml_char = |c: char| matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..);
    assert!(svg.chars().all(is_xml_char), "not XML 1.0: {svg:?}");
    let mut reader = quick_xml::Reader::from_str(&svg);
    let mut texts = Vec::new();
    let mut in_text = false;
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) => {
                in_text = e.name().as_ref() == b"text";
                if in_text {
                    texts.push(String::new());
                }
            }
            quick_xml::events::Event::Text(t) if in_text => {
                texts.last_mut().unwrap().push_str(&t.decode().unwrap());
            }
            quick_xml::events::Event::GeneralRef(r) if in_text => {
                let ch = match r.resolve_char_ref().unwrap() {
                    Some(ch) => ch,
                    None => match r.decode().unwrap().as_ref() {
                        "lt" => '<',
                        "gt" => '>',
                        "amp" => '&',
                        "quot" => '"',
                        "apos" => '\'',
                        other => panic!("unknown entity &{other};"),
                    },
                };
                assert!(is_xml_char(ch), "&#{};", u32::from(ch));
                texts.last_mut().unwrap().push(ch);
            }
            quick_xml::events::Event::End(_) => in_text = false,
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    texts
}

#[test]
fn the_badge_is_drawn_from_the_cases_and_a_verdict_that_disagrees_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let badge = |report: &Path| {
        let out_dir = dir.path().join("badge");
        let _ = std::fs::remove_dir_all(&out_dir);
        let out = run(&[
            "report",
            "badge",
            "--out",
            out_dir.to_str().unwrap(),
            report.to_str().unwrap(),
        ]);
        let endpoint = std::fs::read_to_string(out_dir.join("awa-conformance.json"))
            .ok()
            .map(|t| serde_json::from_str::<Value>(&t).unwrap());
        (out, endpoint, out_dir.join("awa-conformance.svg"))
    };
    let failed = [
        case("producer::unique_key::a", "failed", "x"),
        case("producer::unique_key::b", "errored", "y"),
    ];
    // Every case failed: red, "nonconformant", never "conformant".
    let all_failed = report_file(
        dir.path(),
        "failed.json",
        "nonconformant",
        1,
        "p",
        "core",
        &failed,
    );
    let (out, endpoint, svg) = badge(&all_failed);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    let endpoint = endpoint.unwrap();
    assert_eq!(endpoint["color"], "e05d44", "{endpoint}");
    assert!(endpoint["message"]
        .as_str()
        .unwrap()
        .starts_with("nonconformant · 2 failed"));
    assert_eq!(
        parse_svg(&svg),
        [
            endpoint["label"].as_str().unwrap(),
            endpoint["message"].as_str().unwrap()
        ]
    );
    // No case at all (a run that ended in an error): red, and it says nothing was checked.
    let empty = report_file(dir.path(), "empty.json", "error", 6, "p", "core", &[]);
    let (out, endpoint, _) = badge(&empty);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    let endpoint = endpoint.unwrap();
    assert_eq!(endpoint["color"], "e05d44", "{endpoint}");
    assert!(
        endpoint["message"]
            .as_str()
            .unwrap()
            .starts_with("nothing checked"),
        "{endpoint}"
    );
    // A report claiming "conformant" over failed cases, or over none, is refused naming the
    // file, and no badge is written; so is a verdict that is not one (control characters).
    for (file, verdict, exit, cases) in [
        ("lies.json", "conformant", 0, &failed[..]),
        ("hollow.json", "conformant", 0, &[][..]),
        (
            "bell.json",
            "conformant\u{7}\u{1b}[2J\u{202E}",
            0,
            &[case("producer::x::a", "passed", "")][..],
        ),
    ] {
        let path = report_file(dir.path(), file, verdict, exit, "p", "core", cases);
        for command in [&["badge", "--out"][..], &["html", "--out"][..]] {
            let out_dir = dir.path().join("refused");
            let mut args = vec!["report"];
            args.extend_from_slice(command);
            args.extend([out_dir.to_str().unwrap(), path.to_str().unwrap()]);
            let out = run(&args);
            let err = stderr(&out);
            assert_eq!(code(&out), USAGE, "{file} {command:?}: {err}");
            assert!(err.contains(&format!("{file}: the verdict ")), "{err}");
            assert!(
                err.contains("disagrees with the report's own cases"),
                "{err}"
            );
            assert_inert_terminal(&err);
            assert!(!out_dir.exists(), "{file}: something was written");
        }
        let out = run(&[
            "report",
            "diff",
            path.to_str().unwrap(),
            all_failed.to_str().unwrap(),
        ]);
        assert_eq!(code(&out), USAGE, "{file}: {}", stderr(&out));
    }
    // A level holding control and bidi characters still gives a well-formed SVG.
    let hostile = report_file(
        dir.path(),
        "level.json",
        "nonconformant",
        1,
        "p",
        "core\u{0}\u{7}\u{1b}[31m\n\u{FFFF}\u{202E}<x>&",
        &failed,
    );
    let (out, endpoint, svg) = badge(&hostile);
    assert_eq!(code(&out), SUCCESS, "{}", stderr(&out));
    assert_inert_terminal(&stdout(&out));
    let texts = parse_svg(&svg);
    assert_eq!(texts[1], endpoint.unwrap()["message"].as_str().unwrap());
    assert!(
        texts[1].contains("core\\u{0000}\\u{0007}\\u{001B}[31m\\u{000A}\\u{FFFF}\\u{202E}<x>&"),
        "{texts:?}"
    );
}

#[test]
fn a_report_starting_with_a_byte_order_mark_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let plain = report_file(
        dir.path(),
        "plain.json",
        "conformant",
        0,
        "awa-py 1.0",
        "core",
        &[case("producer::unique_key::a", "passed", "")],
    );
    let bom = dir.path().join("bom.json");
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(&plain).unwrap());
    std::fs::write(&bom, bytes).unwrap();
    let b = bom.to_str().unwrap();
    let out_dir = dir.path().join("out");
    let o = out_dir.to_str().unwrap();
    for args in [
        &["report", "badge", "--out", o, b][..],
        &["report", "html", "--out", o, b][..],
        &["report", "diff", b, b][..],
        &["report", "compatibility", b][..],
    ] {
        let out = run(args);
        assert_eq!(code(&out), SUCCESS, "{args:?}: {}", stderr(&out));
    }
    let endpoint: Value = serde_json::from_str(
        &std::fs::read_to_string(out_dir.join("awa-conformance.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(endpoint["color"], "4c1", "{endpoint}");
    assert!(
        stdout(&run(&["report", "compatibility", b])).contains("| 1 | awa-py 1.0 | conformant |")
    );
}
