//! Fixture repositories written by the tests themselves.
#![allow(dead_code)]

use std::path::Path;

pub fn write(root: &Path, rel: &str, content: impl AsRef<[u8]>) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// A small Python package with every kind of chunk, calls across files, and the bad inputs
/// a walker meets in real checkouts.
pub fn fixture_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        root,
        "shop/cart.py",
        r#""""Shopping cart."""
from .pricing import apply_discount
from shop import tax


class Cart:
    """A cart of items."""

    def __init__(self, owner):
        self.owner = owner
        self.items = []

    def add_item(self, item, quantity=1):
        self.items.append((item, quantity))

    def total_price(self):
        subtotal = sum(i.price * q for i, q in self.items)
        return tax.with_vat(apply_discount(subtotal))
"#,
    );
    write(
        root,
        "shop/pricing.py",
        r#"def apply_discount(amount, rate=0.1):
    """Take the loyalty discount off."""
    return amount * (1 - rate)
"#,
    );
    write(root, "shop/tax.py", "VAT = 0.2\n\n\ndef with_vat(amount):\n    return amount * (1 + VAT)\n");
    write(root, "shop/__init__.py", "");
    write(root, "shop/broken.py", "def ok_function():\n    return 1\n\ndef broken(:\n    pass\n");
    write(root, "shop/latin1.py", b"# caf\xe9\ndef latin():\n    pass\n");
    write(root, "shop/blob.py", b"\x00\x01\x02binary");
    write(root, "ignored_dir/secret.py", "def ignored_function():\n    pass\n");
    write(root, ".gitignore", "ignored_dir/\n");
    write(root, ".hidden/tool.py", "def hidden_function():\n    pass\n");
    write(root, "README.md", "not python\n");
    #[cfg(unix)]
    std::os::unix::fs::symlink(root.join("shop"), root.join("shop/loop")).unwrap();
    dir
}
