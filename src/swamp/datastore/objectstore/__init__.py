"""Object stores: one small interface (base.ObjectStore), several backends."""
