set_option maxHeartbeats 100000 in
set_option autoImplicit false in
theorem prosfi_step (U : Type) [Nonempty U] (Kind : U → Prop) (Nice : U → Prop) (candy : U)
    (h1 : ∀ (x : U), Kind x → Nice x) (h2 : Kind candy) :
    Nice candy := by
  first
      | (simp_all; done)
      | (aesop (config := { terminal := true }); done)
      | (grind; done)
