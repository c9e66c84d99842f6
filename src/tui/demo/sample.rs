//! A tiny fake Python project ("shop") for the demo and the TUI tests. Written for this
//! purpose; small enough to reason about, rich enough to have callers, callees and classes.

pub const FILES: &[(&str, &str)] = &[
    (
        "shop/cart.py",
        r#""""Shopping cart: items, quantities and totals."""
from shop.pricing import apply_discount, tax_for
from shop.inventory import reserve


class Cart:
    """A customer's cart."""

    def __init__(self, customer):
        self.customer = customer
        self.items = {}

    def add(self, sku, quantity=1):
        if quantity <= 0:
            raise ValueError("quantity must be positive")
        reserve(sku, quantity)
        self.items[sku] = self.items.get(sku, 0) + quantity

    def remove(self, sku):
        self.items.pop(sku, None)

    def subtotal(self, prices):
        return sum(prices[sku] * qty for sku, qty in self.items.items())

    def total(self, prices, coupon=None):
        amount = self.subtotal(prices)
        if coupon:
            amount = apply_discount(amount, coupon)
        return round(amount + tax_for(amount, self.customer.region), 2)


def empty_cart(customer):
    return Cart(customer)
"#,
    ),
    (
        "shop/pricing.py",
        r#""""Prices, discounts and taxes."""

TAX_RATES = {"eu": 0.2, "us": 0.07}


def apply_discount(amount, coupon):
    """Apply a percentage coupon; a coupon never makes the amount negative."""
    percent = parse_coupon(coupon)
    return max(amount * (1 - percent / 100), 0)


def parse_coupon(code):
    if not code.startswith("SAVE"):
        raise ValueError(f"unknown coupon {code}")
    return int(code[4:])


def tax_for(amount, region):
    return amount * TAX_RATES.get(region, 0.0)
"#,
    ),
    (
        "shop/inventory.py",
        r#""""Stock levels."""

STOCK = {}


class OutOfStock(Exception):
    def __init__(self, sku):
        super().__init__(f"{sku} is out of stock")
        self.sku = sku


def reserve(sku, quantity):
    available = STOCK.get(sku, 0)
    if available < quantity:
        raise OutOfStock(sku)
    STOCK[sku] = available - quantity


def restock(sku, quantity):
    STOCK[sku] = STOCK.get(sku, 0) + quantity
"#,
    ),
    (
        "shop/checkout.py",
        r#""""Checkout: turn a cart into an order."""
from shop.cart import Cart
from shop.pricing import tax_for


class Order:
    def __init__(self, cart, total):
        self.cart = cart
        self.total = total

    def receipt(self):
        lines = [f"{sku} x{qty}" for sku, qty in self.cart.items.items()]
        return "\n".join(lines + [f"total {self.total:.2f}"])


def checkout(cart, prices, coupon=None):
    total = cart.total(prices, coupon)
    return Order(cart, total)
"#,
    ),
];
