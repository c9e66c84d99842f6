//! Reads a checkpoint's `config.json` and decides whether candle's BERT can run it.
//!
//! The loader is driven by the file, not by a model name: any checkpoint whose
//! `model_type` is `bert` (and whose `architectures`, when given, are BERT heads) loads.

use std::path::Path;

use candle_transformers::models::bert;
use serde_json::Value;

use crate::error::{Error, Result};

pub const CONFIG_FILE: &str = "config.json";
pub const TOKENIZER_FILE: &str = "tokenizer.json";
pub const WEIGHTS_FILE: &str = "model.safetensors";

/// Parses `dir/config.json` into candle's BERT config, rejecting other families by name.
pub fn load_bert_config(dir: &Path) -> Result<bert::Config> {
    let path = dir.join(CONFIG_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    parse_bert_config(&text, &path)
}

/// `path` only names the file in errors.
pub fn parse_bert_config(text: &str, path: &Path) -> Result<bert::Config> {
    let ctx = || path.display().to_string();
    let value: Value = serde_json::from_str(text).map_err(|e| Error::context(ctx(), e))?;
    check_family(&value).map_err(|m| Error::context(ctx(), m))?;
    let config: bert::Config = serde_json::from_value(value).map_err(|e| Error::context(ctx(), e))?;
    if config.num_attention_heads == 0 || !config.hidden_size.is_multiple_of(config.num_attention_heads) {
        return Err(Error::context(
            ctx(),
            format!(
                "hidden_size {} is not a multiple of num_attention_heads {}",
                config.hidden_size, config.num_attention_heads
            ),
        ));
    }
    Ok(config)
}

fn check_family(value: &Value) -> std::result::Result<(), String> {
    let model_type = value.get("model_type").and_then(Value::as_str);
    let architectures: Vec<&str> = value
        .get("architectures")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let arch_ok = architectures.iter().all(|a| a.starts_with("Bert"));
    let type_ok = match model_type {
        Some(t) => t == "bert",
        // Old checkpoints omit model_type; accept them only when the architecture says BERT.
        None => !architectures.is_empty(),
    };
    if type_ok && arch_ok {
        return Ok(());
    }
    Err(format!(
        "unsupported model: model_type {}, architectures [{}]; this build loads BERT-family \
         checkpoints (model_type \"bert\", e.g. sentence-transformers/all-MiniLM-L6-v2)",
        model_type.map_or("missing".to_string(), |t| format!("\"{t}\"")),
        architectures.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const MINILM: &str = r#"{"architectures":["BertModel"],"hidden_act":"gelu",
        "hidden_dropout_prob":0.1,"hidden_size":384,"initializer_range":0.02,
        "intermediate_size":1536,"layer_norm_eps":1e-12,"max_position_embeddings":512,
        "model_type":"bert","num_attention_heads":12,"num_hidden_layers":6,"pad_token_id":0,
        "position_embedding_type":"absolute","type_vocab_size":2,"vocab_size":30522}"#;

    #[test]
    fn minilm_config_parses() {
        let c = parse_bert_config(MINILM, Path::new("x/config.json")).unwrap();
        assert_eq!((c.hidden_size, c.num_hidden_layers, c.vocab_size), (384, 6, 30522));
    }

    #[test]
    fn other_families_are_rejected_naming_the_file() {
        let roberta = MINILM.replace("\"bert\"", "\"roberta\"").replace("BertModel", "RobertaModel");
        let err = parse_bert_config(&roberta, Path::new("ckpt/config.json")).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("ckpt/config.json"), "{msg}");
        assert!(msg.contains("roberta") && msg.contains("RobertaModel"), "{msg}");
    }

    #[test]
    fn non_bert_architecture_with_bert_type_is_rejected() {
        let t5 = MINILM.replace("BertModel", "T5EncoderModel");
        assert!(parse_bert_config(&t5, Path::new("c.json")).is_err());
    }

    #[test]
    fn missing_fields_are_reported() {
        let err = parse_bert_config(r#"{"model_type":"bert"}"#, Path::new("m/config.json"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("m/config.json") && err.contains("missing field"), "{err}");
    }
}
