"""Versioned rubrics and prompt templates: the catalogue (search path, versions, sha256, lookup) in
:mod:`legal_judge.assets.catalogue`, the rubric schema in :mod:`legal_judge.assets.rubrics`, the
sandboxed templates in :mod:`legal_judge.assets.templates`."""
