//! The pipeline against the plain loop, on a tiny random BERT (the real loading path).

use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::Device;

use super::*;
use crate::model::{EncoderInput, EncoderOptions};
use crate::progress::NoProgress;
use crate::testkit::write_tiny_bert;

fn tiny(batch_size: usize) -> (tempfile::TempDir, Encoder) {
    let dir = tempfile::tempdir().unwrap();
    write_tiny_bert(dir.path(), &["def", "load", "config", "return"]);
    let opts = EncoderOptions { max_len: 64, batch_size, ..Default::default() };
    let enc = Encoder::load(dir.path(), &Device::Cpu, opts).unwrap();
    (dir, enc)
}

/// Lengths in no order, from empty to past the max length, so windows sort and batches pad.
fn texts(n: usize) -> Vec<EncoderInput> {
    (0..n).map(|i| EncoderInput::new("def load config return ".repeat((i * 7919) % 23))).collect()
}

fn max_diff(a: &[Vec<f32>], b: &[Vec<f32>]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).flat_map(|(x, y)| x.iter().zip(y).map(|(p, q)| (p - q).abs())).fold(0.0, f32::max)
}

#[test]
fn the_pipeline_returns_the_plain_loops_vectors_in_input_order() {
    // 300 inputs in batches of 4: many windows (8, 16, … 2048), so the threaded path runs.
    let (_d, enc) = tiny(4);
    let inputs = texts(300);
    let tokenized: Vec<TokenizedInput> = inputs.iter().map(|i| enc.tokenize_input(i).unwrap()).collect();
    let plain = enc.embed_tokenized_plain(&tokenized).unwrap();
    let piped = enc.embed_inputs(&inputs, &NoProgress).unwrap();
    assert!(max_diff(&plain, &piped) < 1e-5, "{}", max_diff(&plain, &piped));
    // Each vector is its own input's: the same as embedding that input alone.
    for i in [0, 1, 57, 299] {
        let alone = enc.embed_tokenized_plain(std::slice::from_ref(&tokenized[i])).unwrap();
        assert!(max_diff(&alone, &piped[i..=i]) < 1e-5, "input {i}");
    }
    // One window holding everything batches exactly as the plain loop: identical vectors.
    let (_d, wide) = tiny(256);
    let few = &tokenized[..200];
    assert_eq!(
        wide.embed_tokenized(few, &mut |_, _| Ok(())).unwrap(),
        wide.embed_tokenized_plain(few).unwrap()
    );
}

#[test]
fn stage_times_count_every_sequence_and_token() {
    let (_d, enc) = tiny(4);
    let tokenized: Vec<TokenizedInput> = texts(50).iter().map(|i| enc.tokenize_input(i).unwrap()).collect();
    let mut seen = [false; 50];
    let times = run(&enc, 50, usize::MAX, &|i| Ok(tokenized[i].clone()), &mut |rows, _, _| {
        for (i, _) in rows {
            assert!(!std::mem::replace(&mut seen[i], true), "input {i} twice");
        }
        Ok(())
    })
    .unwrap();
    assert!(seen.iter().all(|&s| s));
    assert_eq!(times.sequences, 50);
    assert_eq!(times.tokens, tokenized.iter().map(TokenizedInput::len).sum::<usize>());
    assert!(times.padded >= times.tokens && times.batches >= 50 / 4);
    assert!(times.forward_s > 0.0 && times.wall_s >= times.forward_s);
}

#[test]
fn max_batch_caps_the_batches() {
    let (_d, enc) = tiny(32);
    let tokenized: Vec<TokenizedInput> = texts(40).iter().map(|i| enc.tokenize_input(i).unwrap()).collect();
    let times = run(&enc, 40, 3, &|i| Ok(tokenized[i].clone()), &mut |rows, _, _| {
        assert!(rows.len() <= 3);
        Ok(())
    })
    .unwrap();
    assert!(times.batches >= 14);
}

#[test]
fn nothing_to_embed_reports_once_and_returns() {
    let (_d, enc) = tiny(4);
    let mut calls = 0;
    let times = run(&enc, 0, usize::MAX, &|_| unreachable!(), &mut |rows, done, _| {
        assert!(rows.is_empty() && done == 0);
        calls += 1;
        Ok(())
    })
    .unwrap();
    assert_eq!((calls, times.sequences), (1, 0));
    assert!(enc.embed_inputs(&[], &NoProgress).unwrap().is_empty());
}

#[test]
fn a_tokenizer_error_names_its_input_and_stops_the_run() {
    let (_d, enc) = tiny(2);
    let tokenized: Vec<TokenizedInput> = texts(200).iter().map(|i| enc.tokenize_input(i).unwrap()).collect();
    let handed = AtomicUsize::new(0);
    let err = run(
        &enc,
        200,
        usize::MAX,
        &|i| {
            if i == 150 {
                Err(Error::invalid(format!("input {i} rejected")))
            } else {
                Ok(tokenized[i].clone())
            }
        },
        &mut |rows, _, _| {
            handed.fetch_add(rows.len(), Ordering::SeqCst);
            Ok(())
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("input 150"), "{err}");
    // The windows before the bad one were embedded; nothing after it.
    assert!(handed.load(Ordering::SeqCst) < 200);
}

#[test]
fn a_consumer_error_stops_the_producer_without_a_hang() {
    let (_d, enc) = tiny(1);
    let tokenized: Vec<TokenizedInput> = texts(500).iter().map(|i| enc.tokenize_input(i).unwrap()).collect();
    let made = AtomicUsize::new(0);
    let mut batches = 0;
    let err = run(
        &enc,
        500,
        usize::MAX,
        &|i| {
            made.fetch_add(1, Ordering::SeqCst);
            Ok(tokenized[i].clone())
        },
        &mut |_, done, _| {
            batches += 1;
            if done >= 3 {
                return Err(Error::Cancelled);
            }
            Ok(())
        },
    )
    .unwrap_err();
    assert!(matches!(err, Error::Cancelled));
    assert_eq!(batches, 4, "the start and three batches");
    // The producer stopped within a window or two of where the consumer did.
    assert!(made.load(Ordering::SeqCst) < 500, "{}", made.load(Ordering::SeqCst));
}

#[test]
fn empty_and_over_long_inputs_embed_as_documented() {
    let (_d, enc) = tiny(4);
    let long = "config ".repeat(5000);
    let inputs = vec![EncoderInput::new(""), EncoderInput::new(long.clone())];
    let v = enc.embed_inputs(&inputs, &NoProgress).unwrap();
    // Empty: [CLS] [SEP]. Over-long: its first 62 tokens between them.
    let empty = enc.tokenize_input(&inputs[0]).unwrap();
    assert_eq!(empty.len(), 2);
    let cut = enc.tokenize_input(&EncoderInput::new("config ".repeat(62))).unwrap();
    assert_eq!(cut, enc.tokenize_input(&inputs[1]).unwrap());
    assert!(max_diff(&v[1..], &enc.embed_tokenized_plain(&[cut]).unwrap()) < 1e-5);
    assert!(v.iter().all(|r| r.iter().all(|x| x.is_finite())));
}
