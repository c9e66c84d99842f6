//! Tree-sitter-python chunk extraction.
