//! Call graph.
