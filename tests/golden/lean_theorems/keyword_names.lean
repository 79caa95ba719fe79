set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] («café» : U → Prop) («end» : U → Prop) («open» : U)
    (h1 : ∀ (x : U), «end» x) (h2 : «café» «open») (hyp3 : ∃ (y : U), ¬«end» y) :
    «end» «open» := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
