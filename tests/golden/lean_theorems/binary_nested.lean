set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (Knows : U → U → Prop) (Loves : U → U → Prop)
    (h1 : ∀ (x : U), ∃ (y : U), Loves x y ∧ ¬Loves y x)
    (h3 : ∀ (x y : U), Loves x y → Knows y x) :
    ∀ (x : U), ∃ (y : U), Knows y x := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
