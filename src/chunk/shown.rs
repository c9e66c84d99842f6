//! A chunk as people know it: its name and kind as its language writes them (issue 81), from
//! the row's [`Written`]; the dotted [`Chunk::name`] and [`ChunkKind`] stay the engine's.

use std::borrow::Cow;

use super::{Chunk, ChunkKind};
use crate::lang::{Form, Spelling, Written};

impl Chunk {
    /// The name as its language writes it (`ActiveRecord::Base#save` of `ActiveRecord.Base.save`).
    pub fn written_name(&self) -> Cow<'_, str> {
        self.spelling().write(&self.name)
    }

    /// The separators [`Chunk::written_name`] uses, for a client that cuts the dotted name first.
    pub fn spelling(&self) -> Spelling {
        let Some(written) = self.written() else {
            return Spelling::DOTTED;
        };
        match self.kind {
            ChunkKind::Method => Spelling { path: written.path, member: written.member(self.form) },
            ChunkKind::Class | ChunkKind::Function | ChunkKind::Macro => {
                Spelling { path: written.path, member: written.path }
            }
            ChunkKind::Module | ChunkKind::Window => Spelling::DOTTED,
        }
    }

    /// The kind as its language knows it (a function in an Elixir module is no method).
    pub fn shown_kind(&self) -> ChunkKind {
        let modules = self.written().is_some_and(|w| w.modules_and_functions);
        match (self.form, self.kind) {
            (Form::Macro, _) => ChunkKind::Macro,
            (Form::Module, _) => ChunkKind::Module,
            (_, ChunkKind::Class) if modules => ChunkKind::Module,
            (_, ChunkKind::Method) if modules => ChunkKind::Function,
            (_, kind) => kind,
        }
    }

    fn written(&self) -> Option<&'static Written> {
        crate::lang::lang_of_path(&self.path).map(|l| &l.spec().written)
    }
}
