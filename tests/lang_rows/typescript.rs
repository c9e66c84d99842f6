//! TypeScript's row on its fixtures (`tests/fixtures/lang/`).

use super::{calls, expect, shared_fixture as fixture};

#[test]
fn typescript_interfaces_enums_classes_and_exports() {
    let file = fixture("store.ts");
    expect(
        &file,
        &[
            ("<module>", "module", 1, 26, "import { Item } from './item';"),
            ("Store", "class", 3, 5, "export interface Store {"),
            ("Mode", "class", 7, 10, "export enum Mode {"),
            ("MemoryStore", "class", 12, 22, "export class MemoryStore implements Store {"),
            ("MemoryStore.get", "method", 15, 17, "export class MemoryStore implements Store {"),
            ("MemoryStore.put", "method", 19, 21, "export class MemoryStore implements Store {"),
            ("normalize", "function", 24, 26, "export function normalize(id: string): string {"),
        ],
    );
    let files = [file];
    assert_eq!(calls(&files, "MemoryStore.put").0, ["normalize"]);
}
