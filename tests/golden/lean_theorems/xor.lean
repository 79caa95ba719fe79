set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (Knave : U → Prop) (Knight : U → Prop) (zoey : U)
    (h1 : ¬(Knight zoey ↔ Knave zoey)) (s1 : ¬Knave zoey) :
    Knight zoey := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
