set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (Blue : U → Prop) (Rainy : Prop) (Red : U → Prop)
    (Sunny : Prop) (h1 : ∀ (x : U), (∃ (x : U), Red x) ∧ Blue x) (h2 : Rainy ↔ ¬Sunny)
    (h3 : Sunny ∨ False) :
    ¬Rainy ∧ True := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
