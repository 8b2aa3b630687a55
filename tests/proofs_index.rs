//! Keeps `proofs/` and the code in step (see `proofs/README.md`):
//!
//! * every `proofs/*.md` except README.md has a `Covers:` line naming functions defined in
//!   `src/`, and ends with a `Tests:` line naming tests that exist as `fn NAME` in
//!   `tests/**/*.rs` or `src/**/*.rs`;
//! * every public function in `src/` whose name starts with `jacobian` or contains
//!   `right_jacobian` or `gradient` — a `pub fn` (not `pub(crate)`/`pub(super)`), or any
//!   `fn` declared inside a `pub trait` — is named in some proof's `Covers:` line;
//! * proofs/README.md links every proof file.
//!
//! The Rust scan is deliberately simple but not naive: comments, string literals
//! (including raw strings) and char literals are blanked out first, so a `{` in a format
//! string or a commented-out `pub fn` cannot confuse it; then tokens are walked with a
//! stack of brace blocks to know whether a `fn` sits directly inside a `pub trait`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

// =======================================================================================
// Files
// =======================================================================================

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// All files with extension `ext` under `dir`, recursively, sorted.
fn files_with_ext(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == ext) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

fn rel(p: &Path) -> String {
    p.strip_prefix(root()).unwrap_or(p).display().to_string()
}

// =======================================================================================
// Rust scanning
// =======================================================================================

/// Replaces comments, string literals and char literals by spaces (keeping newlines, so
/// line numbers survive).
fn blank_non_code(src: &str) -> String {
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        // Line comment.
        if c[i] == '/' && c.get(i + 1) == Some(&'/') {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
            continue;
        }
        // Block comment (nested).
        if c[i] == '/' && c.get(i + 1) == Some(&'*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            continue;
        }
        // Raw (byte) string: r"..", r#".."#, br"..".
        let prev_is_ident = i > 0 && (c[i - 1].is_alphanumeric() || c[i - 1] == '_');
        if !prev_is_ident && (c[i] == 'r' || (c[i] == 'b' && c.get(i + 1) == Some(&'r'))) {
            let mut j = if c[i] == 'b' { i + 2 } else { i + 1 };
            let mut hashes = 0;
            while c.get(j) == Some(&'#') {
                hashes += 1;
                j += 1;
            }
            if c.get(j) == Some(&'"') {
                // Find the closing quote followed by the same number of hashes.
                let mut k = j + 1;
                while k < c.len() {
                    if c[k] == '"' && (0..hashes).all(|h| c.get(k + 1 + h) == Some(&'#')) {
                        k += 1 + hashes;
                        break;
                    }
                    k += 1;
                }
                for &ch in &c[i..k.min(c.len())] {
                    out.push(blank(ch));
                }
                i = k;
                continue;
            }
        }
        // Ordinary (byte) string.
        if c[i] == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
            continue;
        }
        // Char literal ('x', '\n', '\'', '\u{..}') versus lifetime ('a).
        if c[i] == '\'' {
            if c.get(i + 1) == Some(&'\\') {
                let mut k = i + 2;
                while k < c.len() && c[k] != '\'' {
                    k += 1;
                }
                // Skip an escaped quote: '\''.
                if k == i + 2 {
                    k += 1;
                    while k < c.len() && c[k] != '\'' {
                        k += 1;
                    }
                }
                for _ in i..=k.min(c.len() - 1) {
                    out.push(' ');
                }
                i = k + 1;
                continue;
            }
            if c.get(i + 2) == Some(&'\'') {
                out.push_str("   ");
                i += 3;
                continue;
            }
        }
        out.push(c[i]);
        i += 1;
    }
    out
}

#[derive(Debug, Clone, PartialEq)]
struct Tok {
    text: String,
    line: usize,
}

/// Identifiers/numbers as one token, every other non-space character as its own token.
fn tokenize(code: &str) -> Vec<Tok> {
    let mut toks = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let mut word = String::new();
        for ch in line.chars() {
            if ch.is_alphanumeric() || ch == '_' {
                word.push(ch);
            } else {
                if !word.is_empty() {
                    toks.push(Tok {
                        text: std::mem::take(&mut word),
                        line: n + 1,
                    });
                }
                if !ch.is_whitespace() {
                    toks.push(Tok {
                        text: ch.to_string(),
                        line: n + 1,
                    });
                }
            }
        }
        if !word.is_empty() {
            toks.push(Tok {
                text: word,
                line: n + 1,
            });
        }
    }
    toks
}

/// A function definition or declaration found by [`scan_fns`].
#[derive(Debug, Clone, PartialEq)]
struct FnItem {
    name: String,
    line: usize,
    /// `pub fn` (unrestricted), or any `fn` directly inside a `pub trait`.
    public: bool,
}

fn is_ident(s: &str) -> bool {
    s.chars()
        .next()
        .is_some_and(|c| c.is_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// Every `fn NAME` in a Rust source, with whether it is public API.
fn scan_fns(src: &str) -> Vec<FnItem> {
    let toks = tokenize(&blank_non_code(src));
    let t = |i: usize| toks.get(i).map(|x| x.text.as_str()).unwrap_or("");
    // Block stack: true for the body of a `pub trait`.
    let mut stack: Vec<bool> = Vec::new();
    // Set when `pub trait NAME` has been seen and its `{` not yet reached.
    let mut pending_pub_trait = false;
    let mut out = Vec::new();
    for (i, tok) in toks.iter().enumerate() {
        match tok.text.as_str() {
            "{" => {
                stack.push(pending_pub_trait);
                pending_pub_trait = false;
            }
            "}" => {
                stack.pop();
            }
            ";" => pending_pub_trait = false,
            "trait" => {
                // `pub trait`, `pub unsafe trait`, `pub auto trait` (but not `pub(crate)`).
                let mut j = i;
                while j > 0 && matches!(t(j - 1), "unsafe" | "auto") {
                    j -= 1;
                }
                if j > 0 && t(j - 1) == "pub" {
                    pending_pub_trait = true;
                }
            }
            "fn" if is_ident(t(i + 1)) => {
                // Walk back over qualifiers: const, async, unsafe, extern "ABI" (the ABI
                // string is blanked), default.
                let mut j = i;
                while j > 0
                    && matches!(
                        t(j - 1),
                        "const" | "async" | "unsafe" | "extern" | "default"
                    )
                {
                    j -= 1;
                }
                let is_pub = j > 0 && t(j - 1) == "pub";
                let in_pub_trait = stack.last().copied().unwrap_or(false);
                out.push(FnItem {
                    name: t(i + 1).to_string(),
                    line: tok.line,
                    public: is_pub || in_pub_trait,
                });
            }
            _ => {}
        }
    }
    out
}

/// Names that must have a proof (see module docs).
fn is_derivative_name(name: &str) -> bool {
    name.starts_with("jacobian") || name.contains("right_jacobian") || name.contains("gradient")
}

// =======================================================================================
// Proof files
// =======================================================================================

#[derive(Debug)]
struct Proof {
    path: PathBuf,
    covers: Vec<String>,
    tests: Vec<String>,
}

/// Splits `Key: a, b, `c`` into names (backticks and trailing periods removed).
fn names_after(line: &str, key: &str) -> Option<Vec<String>> {
    let rest = line.trim().strip_prefix(key)?;
    Some(
        rest.split(',')
            .map(|s| {
                s.trim()
                    .trim_matches('`')
                    .trim_end_matches('.')
                    .trim()
                    .to_string()
            })
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

fn parse_proof(path: &Path) -> Result<Proof, String> {
    let text = read(path);
    let covers: Vec<String> = text
        .lines()
        .filter_map(|l| names_after(l, "Covers:"))
        .flatten()
        .collect();
    if covers.is_empty() {
        return Err(format!(
            "{}: no `Covers:` line (or it names nothing)",
            rel(path)
        ));
    }
    let last = text
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    let tests = names_after(last, "Tests:").ok_or_else(|| {
        format!(
            "{}: the last non-empty line must be `Tests: name, name, ...`",
            rel(path)
        )
    })?;
    if tests.is_empty() {
        return Err(format!("{}: the `Tests:` line names no test", rel(path)));
    }
    Ok(Proof {
        path: path.to_path_buf(),
        covers,
        tests,
    })
}

fn proofs() -> (Vec<Proof>, Vec<String>) {
    let dir = root().join("proofs");
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    let files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .filter(|p| p.file_name().is_some_and(|n| n != "README.md"))
        .collect();
    for p in files {
        match parse_proof(&p) {
            Ok(proof) => ok.push(proof),
            Err(e) => errors.push(e),
        }
    }
    ok.sort_by(|a, b| a.path.cmp(&b.path));
    (ok, errors)
}

/// Last `::` segment of a `Covers:` entry, without a trailing `()`.
fn last_segment(name: &str) -> &str {
    name.rsplit("::")
        .next()
        .unwrap_or(name)
        .trim_end_matches("()")
}

/// name → files:lines where `fn name` appears, over the given source files.
fn fn_index(files: &[PathBuf]) -> BTreeMap<String, Vec<String>> {
    let mut idx: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files {
        for item in scan_fns(&read(f)) {
            idx.entry(item.name)
                .or_default()
                .push(format!("{}:{}", rel(f), item.line));
        }
    }
    idx
}

// =======================================================================================
// The tests
// =======================================================================================

/// (a) Every proof has `Covers:` and `Tests:`; every covered function is defined in src/
/// and every named test exists.
#[test]
fn proofs_name_existing_tests() {
    let (proofs, mut errors) = proofs();
    assert!(
        !proofs.is_empty() || !errors.is_empty(),
        "no proofs found in proofs/"
    );
    let src_files = files_with_ext(&root().join("src"), "rs");
    let mut test_files = files_with_ext(&root().join("tests"), "rs");
    test_files.extend(src_files.iter().cloned());
    let src_fns = fn_index(&src_files);
    let all_fns = fn_index(&test_files);
    let mut n_tests = 0;
    for p in &proofs {
        for c in &p.covers {
            if !src_fns.contains_key(last_segment(c)) {
                errors.push(format!(
                    "{}: `Covers: {c}` names no function defined in src/",
                    rel(&p.path)
                ));
            }
        }
        for name in &p.tests {
            n_tests += 1;
            if !all_fns.contains_key(name.as_str()) {
                errors.push(format!(
                    "{}: test `{name}` does not exist (no `fn {name}` in tests/ or src/)",
                    rel(&p.path)
                ));
            }
        }
    }
    println!(
        "{} proofs, {} test references checked",
        proofs.len(),
        n_tests
    );
    assert!(
        errors.is_empty(),
        "proofs/ is out of date:\n  {}",
        errors.join("\n  ")
    );
}

/// (b) Every public Jacobian/gradient in src/ is covered by some proof.
#[test]
fn public_jacobians_have_proofs() {
    let (proofs, _) = proofs();
    let covered: BTreeSet<String> = proofs
        .iter()
        .flat_map(|p| p.covers.iter().map(|c| last_segment(c).to_string()))
        .collect();
    let mut required: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in files_with_ext(&root().join("src"), "rs") {
        for item in scan_fns(&read(&f)) {
            if item.public && is_derivative_name(&item.name) {
                required
                    .entry(item.name)
                    .or_default()
                    .push(format!("{}:{}", rel(&f), item.line));
            }
        }
    }
    assert!(
        required.contains_key("jacobian_act") && required.contains_key("right_jacobian"),
        "the scan found none of the known Jacobians: {required:?}"
    );
    let missing: Vec<String> = required
        .iter()
        .filter(|(name, _)| !covered.contains(*name))
        .map(|(name, at)| format!("{name} ({})", at.join(", ")))
        .collect();
    println!(
        "{} public Jacobians/gradients found, {} covered",
        required.len(),
        required.len() - missing.len()
    );
    assert!(
        missing.is_empty(),
        "public Jacobians/gradients without a proof (add a proofs/*.md whose `Covers:` line \
         names them, see proofs/README.md):\n  {}",
        missing.join("\n  ")
    );
}

/// proofs/README.md links every proof file (it is the index).
#[test]
fn readme_indexes_every_proof() {
    let readme = read(&root().join("proofs").join("README.md"));
    let (proofs, _) = proofs();
    let unlisted: Vec<String> = proofs
        .iter()
        .filter_map(|p| p.path.file_name()?.to_str().map(str::to_string))
        .filter(|name| !readme.contains(&format!("({name})")))
        .collect();
    assert!(
        unlisted.is_empty(),
        "proofs/README.md does not link these proofs (add a row `[{{f}}]({{f}})` to its index): {}",
        unlisted.join(", ")
    );
}

/// The scanner itself, on a source exercising what could fool it.
#[test]
fn scanner_finds_public_and_trait_fns_only() {
    let src = r##"
        // pub fn jacobian_in_line_comment() {}
        /* pub fn jacobian_in_block_comment() { /* nested */ } */
        /// Doc: pub fn jacobian_in_doc() {}
        pub fn jacobian_free() -> u8 { let s = "{ pub fn jacobian_in_string() {"; 0 }
        pub(crate) fn jacobian_restricted() {}
        fn jacobian_private() {}
        pub const fn gradient_const() {}
        pub trait Group<'a> {
            fn jacobian_trait(&self) -> char { let c = '{'; let d = '\''; c }
            fn right_jacobian_provided(&self) { let r = r#"}"#; }
        }
        trait Private { fn jacobian_private_trait(&self); }
        impl Foo { pub fn position_gradient(&self) {} fn helper_gradient() {} }
        mod inner { pub fn right_jacobian_inner<'a>(x: &'a str) {} }
        fn after_all() {}
    "##;
    let items = scan_fns(src);
    let public: BTreeSet<&str> = items
        .iter()
        .filter(|i| i.public && is_derivative_name(&i.name))
        .map(|i| i.name.as_str())
        .collect();
    let expected: BTreeSet<&str> = [
        "jacobian_free",
        "gradient_const",
        "jacobian_trait",
        "right_jacobian_provided",
        "position_gradient",
        "right_jacobian_inner",
    ]
    .into_iter()
    .collect();
    assert_eq!(public, expected);
    let all: BTreeSet<&str> = items.iter().map(|i| i.name.as_str()).collect();
    for hidden in [
        "jacobian_in_line_comment",
        "jacobian_in_block_comment",
        "jacobian_in_doc",
        "jacobian_in_string",
    ] {
        assert!(
            !all.contains(hidden),
            "{hidden} was found inside a comment or string"
        );
    }
    assert!(all.contains("after_all") && all.contains("jacobian_private"));
    // Macro-style test lists are found too.
    let listed = scan_fns(
        "group_property_tests! { check, strat;\n fn jacobian_act_matrix_f32: f32, SO3Matrix;\n}",
    );
    assert_eq!(listed[0].name, "jacobian_act_matrix_f32");
    assert_eq!(listed[0].line, 2);
}
