"""``dkg serve``: answers over HTTP and a web page for clinicians (FastAPI on uvicorn)."""
