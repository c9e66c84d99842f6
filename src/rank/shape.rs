//! What kind of query a text is, and which order its results are shown in. One detector for
//! every client: the TUI's status line, the JSON answer's `order`, MCP `locate` and eval all ask
//! [`QueryShape::of`].

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// The kind of a query, from its text alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryShape {
    /// One identifier, a qualified name or a short phrase naming one (`Router`,
    /// `Runtime::spawn`, `the Session class`): see [`super::names::NameQuery`].
    Name,
    /// A short question or phrase ("how are spawned tasks scheduled"): at most
    /// [`QUESTION_WORDS`] words on at most two lines, no code block.
    Question,
    /// Anything longer: an issue, a bug report, a feature request.
    Issue,
}

/// The most words a question has; more is an issue. Issue titles run to 8-12 words, the
/// questions people type into a search box to fewer.
pub const QUESTION_WORDS: usize = 16;

impl QueryShape {
    pub fn of(query: &str) -> QueryShape {
        if super::names::NameQuery::of(query).is_some() {
            return QueryShape::Name;
        }
        let lines = query.lines().filter(|l| !l.trim().is_empty()).count();
        let words = query.split_whitespace().count();
        if words <= QUESTION_WORDS && lines <= 2 && !query.contains("```") {
            QueryShape::Question
        } else {
            QueryShape::Issue
        }
    }

    /// The order this shape's results are shown in unless asked otherwise (docs/RESULTS.md,
    /// "Files or chunks first"): issues keep the flat chunk order (a fix's chunks usually
    /// share a file, and the flat order ranks them all), questions and names are answered
    /// by files.
    pub fn default_order(self) -> ResultOrder {
        match self {
            QueryShape::Issue => ResultOrder::Flat,
            QueryShape::Question | QueryShape::Name => ResultOrder::Grouped,
        }
    }

    /// Whether `--dense auto` answers this shape from the static tier at once where the
    /// transformer has not embedded the query's candidates (issue 80's ship rule, measured on
    /// the questions set: docs/RESULTS.md "The ranking layer"). A pasted issue needs the
    /// transformer and waits for its candidates.
    pub fn static_answers_at_once(self) -> bool {
        matches!(self, QueryShape::Question | QueryShape::Name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            QueryShape::Name => "name",
            QueryShape::Question => "question",
            QueryShape::Issue => "issue",
        }
    }
}

impl fmt::Display for QueryShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How a ranking is shown: chunk by chunk, or one row per file (its other chunks beneath).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultOrder {
    Flat,
    Grouped,
}

impl ResultOrder {
    pub fn as_str(self) -> &'static str {
        match self {
            ResultOrder::Flat => "flat",
            ResultOrder::Grouped => "grouped",
        }
    }
}

impl fmt::Display for ResultOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a client asks for: an order, or the query shape's default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OrderChoice {
    #[default]
    Auto,
    Fixed(ResultOrder),
}

impl OrderChoice {
    /// The order `query` is shown in, and its shape.
    pub fn resolve(self, query: &str) -> (ResultOrder, QueryShape) {
        let shape = QueryShape::of(query);
        match self {
            OrderChoice::Auto => (shape.default_order(), shape),
            OrderChoice::Fixed(order) => (order, shape),
        }
    }
}

impl FromStr for OrderChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(OrderChoice::Auto),
            "flat" | "chunks" => Ok(OrderChoice::Fixed(ResultOrder::Flat)),
            "grouped" | "files" => Ok(OrderChoice::Fixed(ResultOrder::Grouped)),
            other => Err(format!("unknown order `{other}` (expected auto, flat or grouped)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_questions_and_issues_are_told_apart() {
        assert_eq!(QueryShape::of("Router"), QueryShape::Name);
        assert_eq!(QueryShape::of("Runtime::spawn"), QueryShape::Name);
        assert_eq!(QueryShape::of("how are spawned tasks scheduled"), QueryShape::Question);
        assert_eq!(QueryShape::of("WebSocket client"), QueryShape::Question);
        let issue = "Calling `spawn` inside a `LocalSet` panics\n\nWhen I run the following program the \
                     runtime panics with `cannot spawn` although the docs say it should work.\n\
                     ```rust\nfn main() {}\n```\n";
        assert_eq!(QueryShape::of(issue), QueryShape::Issue);
        let long_line = "word ".repeat(40);
        assert_eq!(QueryShape::of(&long_line), QueryShape::Issue);
    }

    #[test]
    fn orders_follow_the_shape_unless_fixed() {
        assert_eq!(OrderChoice::Auto.resolve("WebSocket client").0, ResultOrder::Grouped);
        assert_eq!(OrderChoice::Auto.resolve(&"a long issue ".repeat(20)).0, ResultOrder::Flat);
        let flat: OrderChoice = "flat".parse().unwrap();
        assert_eq!(flat.resolve("Router"), (ResultOrder::Flat, QueryShape::Name));
        assert!("sideways".parse::<OrderChoice>().is_err());
    }

    #[test]
    fn odd_queries_have_a_shape_without_panic() {
        assert_eq!(QueryShape::of("x"), QueryShape::Name);
        assert_eq!(QueryShape::of(""), QueryShape::Question);
        let many: String = (0..1000).map(|i| format!("ident_{i} ")).collect();
        assert_eq!(QueryShape::of(&many), QueryShape::Issue);
        assert_eq!(QueryShape::of("é ü 漢字"), QueryShape::Question);
    }
}
