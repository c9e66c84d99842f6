//! How a language writes a definition's name and kind, for people (issue 81): Ruby's
//! `ActiveRecord::Base#save` and `Base.create`, Lua's `M:m`, Elixir's modules and functions.
//! The engine names every chunk dotted (`A.B.m`), so calls, look-ups, caches and eval keys
//! keep one form; every client shows a chunk through [`crate::chunk::Chunk::written_name`] and
//! [`crate::chunk::Chunk::shown_kind`], and look-ups take either form (`rank::names::dotted`).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use tree_sitter::Node;

/// What a definition is, where its language tells apart what the chunk's kind does not. The row's
/// [`Written::form`] reads it from the definition's node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Form {
    /// As its kind says.
    #[default]
    Plain,
    /// A method called on an instance with the receiver passed implicitly: Lua's
    /// `function M:m()`, written `M:m` (`function M.f()` is `M.f`).
    Instance,
    /// A method of the type itself: Ruby's `def self.m` and the methods of `class << self`,
    /// written `A.m` (an instance method is `A#m`).
    Singleton,
    /// A macro defined as a function is: Elixir's `defmacro`, `defguard`.
    Macro,
    /// A module the engine reads as a type (it has functions of its own): a Ruby `module`.
    Module,
}

/// A row's way of writing names and kinds.
pub struct Written {
    /// Between a namespace and what it holds: Ruby's `::` (`ActiveRecord::Base`).
    pub path: &'static str,
    /// Before a method's own name: Ruby's `#` (`Base#save`).
    pub method: &'static str,
    /// Before an [`Form::Instance`] method's name: Lua's `:`.
    pub instance: &'static str,
    /// Before a [`Form::Singleton`] method's name: Ruby's `.`.
    pub singleton: &'static str,
    /// Whether what the engine reads as classes and methods are modules and their functions
    /// (Elixir: `defp` is no method, `defmodule` no class).
    pub modules_and_functions: bool,
    /// The [`Form`] of a function's or a type's definition node.
    pub form: fn(Node, &str) -> Form,
}

impl Written {
    /// Dotted, as the engine names chunks: Python, Java, Go, C#, …
    pub const DOTTED: Written = Written {
        path: ".",
        method: ".",
        instance: ".",
        singleton: ".",
        modules_and_functions: false,
        form: plain,
    };

    /// The separator before a method's own name, by its form.
    pub fn member(&self, form: Form) -> &'static str {
        match form {
            Form::Instance => self.instance,
            Form::Singleton => self.singleton,
            Form::Plain | Form::Macro | Form::Module => self.method,
        }
    }
}

/// The separators one name is written with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spelling {
    /// Between namespaces.
    pub path: &'static str,
    /// Before the name's last part.
    pub member: &'static str,
}

impl Spelling {
    pub const DOTTED: Spelling = Spelling { path: ".", member: "." };

    /// `dotted` (a name as the engine spells it, or a cut of one, `….Inner.m`) written with
    /// these separators: its last `.` the member's, the others the path's.
    pub fn write(self, dotted: &str) -> Cow<'_, str> {
        if self == Spelling::DOTTED {
            return Cow::Borrowed(dotted);
        }
        match dotted.rsplit_once('.') {
            Some((head, last)) => {
                Cow::Owned(format!("{}{}{last}", head.replace('.', self.path), self.member))
            }
            None => Cow::Borrowed(dotted),
        }
    }
}

fn plain(_: Node, _: &str) -> Form {
    Form::Plain
}
