FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
COPY requirements.lock .
# requirements.lock installs the Python client from the repository (editable).
COPY clients/python clients/python
RUN pip install --no-cache-dir -r requirements.lock
COPY . .
# docker-compose.yml gives each service (web, worker, beat) its command.
CMD ["gunicorn", "config.wsgi", "-b", "0.0.0.0:8000", "-w", "4"]
