//! Method names of Python's built-in types. `x.pop()` on an unknown receiver is almost
//! always a list or dict call, so the repository-unique-name fallback must not link it to
//! the one repository class that happens to define `pop` (in sympy that single guess gave
//! `OrderedSet.pop` 386 false callers).

/// Sorted, for binary search.
const BUILTIN_METHODS: &[&str] = &[
    "add",
    "append",
    "capitalize",
    "casefold",
    "center",
    "clear",
    "close",
    "copy",
    "count",
    "decode",
    "difference",
    "difference_update",
    "discard",
    "encode",
    "endswith",
    "expandtabs",
    "extend",
    "find",
    "flush",
    "format",
    "format_map",
    "fromkeys",
    "get",
    "group",
    "groupdict",
    "groups",
    "index",
    "insert",
    "intersection",
    "intersection_update",
    "isalnum",
    "isalpha",
    "isdecimal",
    "isdigit",
    "isdisjoint",
    "isidentifier",
    "islower",
    "isnumeric",
    "isspace",
    "issubset",
    "issuperset",
    "istitle",
    "isupper",
    "items",
    "join",
    "keys",
    "ljust",
    "lower",
    "lstrip",
    "maketrans",
    "partition",
    "pop",
    "popitem",
    "read",
    "readline",
    "readlines",
    "remove",
    "removeprefix",
    "removesuffix",
    "replace",
    "reverse",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "seek",
    "setdefault",
    "sort",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "symmetric_difference",
    "symmetric_difference_update",
    "tell",
    "title",
    "translate",
    "union",
    "update",
    "upper",
    "values",
    "write",
    "writelines",
    "zfill",
];

/// Whether `name` is a method of a built-in type (list, dict, set, str, file, match).
pub(crate) fn is_builtin_method(name: &str) -> bool {
    BUILTIN_METHODS.binary_search(&name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_is_sorted_so_binary_search_finds_every_entry() {
        assert!(BUILTIN_METHODS.windows(2).all(|w| w[0] < w[1]));
        assert!(is_builtin_method("pop") && is_builtin_method("zfill") && is_builtin_method("add"));
        assert!(!is_builtin_method("frobnicate"));
    }
}
