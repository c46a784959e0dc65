"""The guideline RAG chatbot: crawl a web guideline, index its pages, answer from them or refuse."""
