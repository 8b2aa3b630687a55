//! Vector joint constraints (paper Sections 5.2–5.5, Appendix F).
