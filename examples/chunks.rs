//! Prints the chunks and call graph the index makes of the files given: a quick look at what
//! a language's rules yield (`cargo run --example chunks -- FILE...`).

use coret::callgraph::CallGraph;
use coret::chunk::chunk_file;

fn main() -> anyhow::Result<()> {
    let mut files = Vec::new();
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path)?;
        files.push(chunk_file(&path, &text));
    }
    let graph = CallGraph::build(&files);
    let mut id = 0;
    for file in &files {
        println!(
            "== {} ({} chunks{})",
            file.path,
            file.chunks.len(),
            if file.has_syntax_errors { ", syntax errors" } else { "" }
        );
        for (chunk, calls) in file.chunks.iter().zip(&file.calls) {
            let first = chunk.text.lines().nth(1).unwrap_or("");
            println!(
                "{:>4} {:<8} {:<40} {:>5}-{:<5} | {}",
                id,
                chunk.kind.as_str(),
                chunk.name,
                chunk.start_line,
                chunk.end_line,
                first
            );
            let callees: Vec<&str> = graph.callees[id].iter().map(|&c| all_name(&files, c)).collect();
            if !callees.is_empty() {
                println!("       -> {}", callees.join(", "));
            }
            if !graph.unresolved[id].is_empty() {
                println!("       ?? {}", graph.unresolved[id].join(", "));
            }
            let _ = calls;
            id += 1;
        }
    }
    if std::env::var("SHOW_TEXT").is_ok() {
        for file in &files {
            for chunk in &file.chunks {
                println!("----- {} [{}]\n{}", chunk.name, chunk.kind.as_str(), chunk.text);
            }
        }
    }
    Ok(())
}

fn all_name(files: &[coret::chunk::FileSyntax], id: u32) -> &str {
    let mut id = id as usize;
    for f in files {
        if id < f.chunks.len() {
            return &f.chunks[id].name;
        }
        id -= f.chunks.len();
    }
    "?"
}
