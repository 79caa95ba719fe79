set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (P : U → Prop) (a : U) (b : U) (f : U → U)
    (h1 : ∀ (x : U), f x = x) (h2 : a ≠ b) (h3 : P (f (f a))) :
    P a ∧ f b ≠ a := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
