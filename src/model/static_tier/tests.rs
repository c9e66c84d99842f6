//! The static table: its file round trip, bad files, and the vectors it gives.

use super::*;

/// A tokenizer over a few words (WordPiece, BERT's normaliser and pre-tokeniser).
fn tokenizer_json(words: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    crate::testkit::write_tiny_bert(dir.path(), words);
    std::fs::read_to_string(dir.path().join("tokenizer.json")).unwrap()
}

fn table(dim: usize) -> (StaticTable, Vec<u8>) {
    let json = tokenizer_json(&["alpha", "beta", "gamma", "run"]);
    let vocab = tokenizers::Tokenizer::from_bytes(json.as_bytes()).unwrap().get_vocab_size(true);
    let rows: Vec<f32> = (0..vocab * dim).map(|i| ((i * 7919) % 13) as f32 - 6.0).collect();
    StaticTable::from_rows(&rows, dim, &json, "tiny", "test").unwrap()
}

#[test]
fn a_table_round_trips_through_its_file_and_names_itself_by_its_bytes() {
    let (t, bytes) = table(8);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.safetensors");
    let sha = write(&path, &bytes).unwrap();
    let back = StaticTable::load(&path).unwrap();
    assert_eq!(back.name(), t.name());
    assert!(t.name().starts_with("static-") && sha.starts_with(&t.name()[7..]));
    assert_eq!(back.rows(), t.rows());
    let v = back.embed("alpha beta").unwrap();
    assert_eq!(v.len(), 8);
    assert!((v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-4);
}

#[test]
fn a_truncated_corrupt_or_foreign_file_is_refused_naming_it_and_the_rebuild_command() {
    let (_, bytes) = table(8);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.safetensors");
    write(&path, &bytes).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
    let err = StaticTable::load(&path).err().unwrap().to_string();
    assert!(err.contains("s.safetensors") && err.contains(REBUILD) && err.contains("sha256"), "{err}");
    // Without a sha256 beside it, the truncated file is still refused by its own structure.
    std::fs::remove_file(crate::model::tower_file::sidecar(&path)).unwrap();
    let err = StaticTable::load(&path).err().unwrap().to_string();
    assert!(err.contains("s.safetensors") && err.contains(REBUILD), "{err}");
    let missing = StaticTable::load(&dir.path().join("none.safetensors")).err().unwrap().to_string();
    assert!(missing.contains("none.safetensors") && missing.contains(REBUILD), "{missing}");
    // A LoRA-format file is not a static table.
    let meta = [
        (crate::model::tower_file::META_FORMAT.to_string(), "coret-lora/1".to_string()),
        (crate::model::tower_file::META_BASE.to_string(), "x".to_string()),
    ]
    .into();
    let foreign = crate::model::tower_file::to_bytes(Vec::new(), &meta).unwrap();
    let err = StaticTable::from_bytes(&foreign, None, "f.safetensors").err().unwrap().to_string();
    assert!(err.contains("not a static table"), "{err}");
}

#[test]
fn empty_repeated_unknown_and_huge_texts_give_defined_vectors() {
    let (t, _) = table(8);
    let finite = |v: &[f32]| v.iter().all(|x| x.is_finite());
    let empty = t.embed("").unwrap();
    assert!(empty.iter().all(|&x| x == 0.0), "no token: the zero vector, never NaN");
    let once = t.embed("alpha").unwrap();
    let many = t.embed(&"alpha ".repeat(10_000)).unwrap();
    assert!(finite(&many));
    assert!(once.iter().zip(&many).all(|(a, b)| (a - b).abs() < 1e-4), "a repeated token is that token");
    assert!(finite(&t.embed("zzzz qqqq ??? 漢字").unwrap()));
    let huge = "x".repeat(10 << 20);
    assert!(finite(&t.embed(&huge).unwrap()));
    assert!(t.ids(&"alpha ".repeat(100_000)).unwrap().len() <= MAX_TOKENS);
}

#[test]
fn the_word_memo_gives_the_tokenizers_own_ids() {
    let (t, _) = table(4);
    let texts = [
        "def alpha(beta):\n    return gamma.run(beta) # héllo wörld",
        "class Alpha_Beta{int x=1;}//@#$%^&*~`\"'",
        "  \t\n",
        "ＡＢＣ 漢字 naïve café\u{a0}run\u{3000}alpha",
        "alphabetagamma runrun",
    ];
    for text in texts {
        let direct = t.words().tokenizer().encode(text, false).unwrap().get_ids().to_vec();
        assert_eq!(t.ids(text).unwrap(), direct, "{text:?}");
        assert_eq!(t.ids(text).unwrap(), direct, "{text:?} again, from the memo");
    }
}

#[test]
fn the_built_in_table_loads_and_is_the_shipped_file() {
    let t = StaticTable::builtin().expect("the shipped static table loads and matches its sha256");
    assert!(t.dim() >= 64 && t.vocab_size() > 20_000, "{} x {}", t.vocab_size(), t.dim());
    let sha = include_str!("../../../models/coret-static.sha256").trim();
    assert!(sha.starts_with(&t.name()["static-".len()..]));
}
