/-
The header every prosfi check runs against: imported once per REPL process (env 0), never
re-imported per check. Keep it small: every REPL process pays for it at start-up.

`Xor'` is not defined here on purpose: core Lean has no `Xor'` (it is Mathlib's), and prosfi
renders `Xor' A B` as `¬(A ↔ B)` before anything reaches Lean, so simp/aesop/grind only see
core connectives, no unfolding lemma is needed and nothing can clash with a library `Xor'`.

`set_option autoImplicit false` below holds for this file only (options are not exported);
every rendered theorem repeats it with `set_option autoImplicit false in`.
-/
import Aesop

set_option autoImplicit false

namespace Prosfi

/-- A marker that the header loaded; `prosfi lean probe` checks for it. -/
theorem header_loaded : True := trivial

end Prosfi
