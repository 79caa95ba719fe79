set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (Q : U → Prop) (R : U → Prop) (U_1 : U)
    (h1 : ∀ (U_2 : U), Q U_2 → R U_2) (hyp2 : Q U_1) (s1 : ∀ (p : U), R p → Q p) :
    R U_1 := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
